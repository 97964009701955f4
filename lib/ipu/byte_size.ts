/**
 * Byte counts as people read them: `1.5 MiB`, `897.0 MiB`, `312 B`.
 */

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

/** `bytes` in binary units with one decimal (whole bytes below 1 KiB). */
export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${Math.round(value)} B` : `${value.toFixed(1)} ${UNITS[unit]}`;
}
