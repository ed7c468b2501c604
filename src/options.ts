/**
 * The one way a part checks its constructor options: each check names the option (`Owner:
 * options.name`), throws TypeError for a missing value and RangeError for a number out of range,
 * and returns the value so a constructor can check and assign in one line.
 */

/** `value`, which must be present (not null, undefined, '' or 0-length). */
export function required<T>(owner: string, name: string, value: T | null | undefined): T {
  if (value === null || value === undefined || value === '') throw new TypeError(`${owner}: options.${name} is required`);
  return value;
}

/** A whole number from `min` to `max`. */
export function wholeNumber(owner: string, name: string, value: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `≥ ${min}` : `from ${min} to ${max}`;
    throw new RangeError(`${owner}: options.${name} must be a whole number ${range}, got ${value}`);
  }
  return value;
}

/** A finite number from `min` to `max` (inclusive). */
export function numberWithin(owner: string, name: string, value: number, min: number, max = Infinity): number {
  if (!Number.isFinite(value) || value < min || value > max) {
    const range = max === Infinity ? `≥ ${min}` : `from ${min} to ${max}`;
    throw new RangeError(`${owner}: options.${name} must be a number ${range}, got ${value}`);
  }
  return value;
}

/** A finite number above zero (a duration, an interval). */
export function positiveNumber(owner: string, name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) throw new RangeError(`${owner}: options.${name} must be a positive number, got ${value}`);
  return value;
}
