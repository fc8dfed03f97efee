// Package e2e holds the tests that run topobench's binary as a user
// runs it, on real servers, and read what it wrote: the answer a short
// sweep of `make compare`'s design gives, checked for every figure the
// design measures. It has no code of its own.
package e2e
