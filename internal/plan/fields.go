package plan

// The fields an error of the plan names. Each is the name of compare's
// flag that sets it; Requests and Fraction are the presets' alone.
const (
	Targets           Field = "targets"
	Path              Field = "path"
	Topologies        Field = "topologies"
	GOMAXPROCS        Field = "gomaxprocs"
	Connections       Field = "connections"
	Load              Field = "load"
	Keepalive         Field = "upstream-keepalive"
	Rate              Field = "rate"
	Wait              Field = "wait"
	Work              Field = "work"
	Requests          Field = "requests"
	Fraction          Field = "fraction"
	MaxConnections    Field = "max-connections"
	Reps              Field = "reps"
	Duration          Field = "duration"
	Warmup            Field = "warmup"
	Threads           Field = "threads"
	Timeout           Field = "timeout"
	Streams           Field = "streams"
	Close             Field = "close"
	PinLoad           Field = "pin-load"
	PinServer         Field = "pin-server"
	CPUs              Field = "cpus"
	Isolate           Field = "isolate"
	LinkDelay         Field = "link-delay"
	SpeedProbe        Field = "speed-probe"
	Design            Field = "design"
	Windows           Field = "window"
	Lead              Field = "lead"
	CrossCheck        Field = "cross-check"
	LatencyRate       Field = "latency-rate"
	StandaloneProcess Field = "standalone-process"
	Preset            Field = "preset"
	Scale             Field = "scale"
	Budget            Field = "budget"
	Precision         Field = "precision"
)

// The fields of where a plan runs (Where).
const (
	HelloAgent Field = "hello-agent"
	NginxAgent Field = "nginx-agent"
	FreePorts  Field = "free-ports"
	Cluster    Field = "swarm"
	SwarmAllow Field = "swarm-allow"
	Resume     Field = "resume"
	Out        Field = "out"
)
