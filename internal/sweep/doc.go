// Package sweep runs one comparison from start to finish: it checks the
// plan and the machine, finds the tools, records the environment, chooses
// addresses, and for each block of the plan starts the servers, verifies
// parity before anything is measured, measures every cell, and keeps every
// finished cell on disk the moment it finishes, so an interrupted sweep
// loses nothing and can be resumed.
//
// The plan is internal/plan's, checked there once (plan.Check) with where
// the sweep runs; the sweep checks only what the machine decides (the CPUs
// allowed, the targets' toolchains, namespaces, control groups, a
// cluster's nodes). The plan's dimensions are typed lists; the sweep
// measures their product, and one function, results.Cell.Key, names a cell.
//
// What stays here is the flow and its three steps of the run itself:
//
//   - the design (design.go): how it measures, chosen from the plan in one
//     place and run by one loop, rounds (rounds.go) or paired (paired.go,
//     its duet pairing duet.go), with internal/stopping's rules of when to
//     stop and what to measure next;
//   - the measurement (cell.go, measure.go): a cell's warmup and window,
//     the samples around it and the figures of its record;
//   - the records (records.go, env.json by warn.go's writeEnv, the
//     progress lines of internal/progress): kept in memory as written; a
//     resumed sweep reads its directory once.
//
// What a run brings up around the measurement is internal/rig's (the
// namespaces, the servers' groups and their start and stop, the speed
// probes, the cluster's servers), and what loads them internal/loadgen's
// (wrk and the built-in engine, one session a start of the servers); the
// sweep picks the generators for the plan (newGenerators) and calls both.
package sweep
