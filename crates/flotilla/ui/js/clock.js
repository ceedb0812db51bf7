// The hub's clock. Under `flotilla up --clock-speed N` the hub runs on simulated time, so
// countdowns (a stage's wait, a window's opening) must tick on the hub's time, not the
// browser's: sample GET /clock now and then, and extrapolate between samples at the
// observed speed.

import { get } from './api.js';

const SAMPLE_MS = 5000;
let sample = null; // {hub, local}
let speed = 1;
let timer = null;

async function resample() {
  try {
    const local = Date.now();
    const reading = await get('/clock');
    const hub = Date.parse(reading.now);
    if (sample && local - sample.local >= 1000) {
      const observed = (hub - sample.hub) / (local - sample.local);
      if (observed > 0) speed = observed;
    }
    sample = { hub, local };
  } catch {
    // keep extrapolating from the last sample
  }
}

/** Starts following the hub's clock. */
export async function start() {
  if (!timer) {
    await resample();
    timer = setInterval(resample, SAMPLE_MS);
  }
}

/** Stops following the hub's clock (signed out: the hub would refuse the readings). */
export function stop() {
  clearInterval(timer);
  timer = null;
}

/** The hub's time now, in milliseconds since the epoch. */
export function now() {
  if (!sample) return Date.now();
  return sample.hub + (Date.now() - sample.local) * speed;
}

/** How many hub seconds pass per real second. */
export function rate() {
  return speed;
}
