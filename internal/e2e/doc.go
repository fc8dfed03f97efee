// Package e2e holds the tests that run topobench's binary as a user
// runs it, on real servers, and read what it wrote: the answer a short
// sweep of `make compare`'s design gives, checked for every figure the
// design measures; and compare -swarm on a real two-node Docker Swarm
// (internal/cluster/swarmtest, as root), refused in one line where it
// cannot run, then swept with the load from one node and from both,
// interrupted with Ctrl-C and resumed, its records and merged
// histograms checked and no service left. It has no code of its own.
package e2e
