// Package tuning carries the machine tuning that goes with the benchmark:
// sysctl.conf (kernel settings, after the 2013 reference run, without
// tcp_tw_recycle) and limits.conf (open files). They sit here for people to
// read and install; internal/preflight reads them from here to compare with
// what is in effect.
package tuning

import "embed"

// Files holds sysctl.conf and limits.conf.
//
//go:embed sysctl.conf limits.conf
var Files embed.FS
