package dev.weft.backends.comm.fake;

/** A rank's place in a communicator created by {@code split} or {@code dup}. */
record Membership(CommGroup group, int rank) {
}
