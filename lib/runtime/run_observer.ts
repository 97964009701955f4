/**
 * What a run tells the outside as it goes: the device checks for simulated
 * faults before each unit of the schedule.
 */

/** Called before each unit of the schedule runs on a replica. */
export interface RunObserver {
  beforeWork(unit: number, replica: number): void;
}
