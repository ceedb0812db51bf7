"""What both client checks share: assertions that fail a check with a message, polling, and
running one check with a line printed for it (`ok  NAME` or `FAIL NAME: detail`)."""

import time
import traceback

from kubernetes.client.exceptions import ApiException


class CheckFailed(Exception):
    pass


def expect(cond, message):
    if not cond:
        raise CheckFailed(message)


def expect_eq(actual, wanted, what):
    if actual != wanted:
        raise CheckFailed(f"{what}: got {actual!r}, want {wanted!r}")


def short(value, limit=600):
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def eventually(probe, what, timeout=30.0, interval=0.25, abort=None):
    """Polls probe() until it returns a true value; fails with the last value after timeout,
    or at once with abort()'s message when abort() returns one."""
    deadline = time.monotonic() + timeout
    while True:
        last = probe()
        if last:
            return last
        why = abort() if abort else None
        if why:
            raise CheckFailed(f"{what}: {why}")
        if time.monotonic() > deadline:
            raise CheckFailed(f"{what} (after {timeout:.0f}s; last: {short(last)})")
        time.sleep(interval)


def run(label, fn):
    """Runs one check, printing `ok  LABEL` or `FAIL LABEL: why`; True when it passed."""
    try:
        fn()
    except CheckFailed as e:
        print(f"FAIL {label}: {e}", flush=True)
        return False
    except ApiException as e:
        print(f"FAIL {label}: HTTP {e.status} {e.reason}: {e.body}", flush=True)
        traceback.print_exc()
        return False
    except Exception as e:
        print(f"FAIL {label}: {type(e).__name__}: {e}", flush=True)
        traceback.print_exc()
        return False
    print(f"ok  {label}", flush=True)
    return True
