package dev.weft.backends.comm.check;

/** One entry of a rank's communication schedule on one communicator: an operation, a loop or a branch. */
public sealed interface ScheduleItem permits CommStep, Repeat, Branch {
}
