// Package targets holds the sources of the servers topobench measures
// beside cmd/hello, one folder each, embedded so that the harness can build
// them from any working directory: erlang (gen_tcp, a process per
// connection), java-threads (a thread per connection), java-pool (a fixed
// thread pool), java-netty (Netty 4's HTTP codec) and java-jetty (an
// embedded Jetty 9 handler); java-common is shared by the Java ones.
// internal/target builds and runs them.
package targets

import "embed"

// Sources is the tree of target sources, one folder per target.
//
//go:embed erlang java-common java-threads java-pool java-netty java-jetty
var Sources embed.FS
