"""A tiny kopf operator for Widgets (widgets.clients.flotilla.test), run by kopf_check.py.

create: posts an Event (kopf.info) and returns a value, which kopf writes to status.created.
update of spec.size: returns the old and new size, which kopf writes to
status["resized/spec.size"] (a field handler's id is its name and the field).
delete: posts an Event, then holds the object for a moment; having a delete handler makes
kopf put its finalizer on every Widget and remove it only once this handler is done.
"""

import asyncio

import kopf

GROUP, VERSION, PLURAL = "clients.flotilla.test", "v1", "widgets"


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_):
    # Short watch requests, so a watch that the hub ends early or never answers shows soon.
    settings.watching.server_timeout = 60
    settings.watching.client_timeout = 90
    settings.posting.level = 20  # logging.INFO: kopf.info events are posted


@kopf.on.create(GROUP, VERSION, PLURAL)
def created(body, spec, name, logger, **_):
    size = spec.get("size")
    kopf.info(body, reason="WidgetCreated", message=f"widget {name} has size {size}")
    logger.info("created widget %s (size %s)", name, size)
    return {"size": size, "greeting": f"hello {name}"}


@kopf.on.update(GROUP, VERSION, PLURAL, field="spec.size")
def resized(body, old, new, name, logger, **_):
    logger.info("widget %s resized %s -> %s", name, old, new)
    return {"from": old, "to": new}


@kopf.on.delete(GROUP, VERSION, PLURAL)
async def deleted(body, name, logger, **_):
    kopf.info(body, reason="WidgetDeleted", message=f"widget {name} deleted")
    # The check reads the object while this runs: it must still be there, marked for deletion.
    await asyncio.sleep(3)
    logger.info("widget %s released", name)
