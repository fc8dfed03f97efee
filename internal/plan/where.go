package plan

import (
	"slices"

	"github.com/topobench/topobench/internal/results"
	"github.com/topobench/topobench/internal/topology"
)

// Where is where a plan runs, as far as its rules depend on it: the
// supervisors that run the servers elsewhere, a cluster, and the sweep
// being resumed. The machine itself is no part of it.
type Where struct {
	// HelloAgent and NginxAgent say cmd/hello and nginx run under
	// supervisors in other containers.
	HelloAgent, NginxAgent bool
	// Cluster says the servers and the load run on a cluster's nodes.
	Cluster bool
	// FreePorts says the servers listen on ports the kernel reports free.
	FreePorts bool
	// Resume says the plan is that of the sweep in Dir, being finished;
	// ResumedOn is the cluster that sweep ran on ("" for one machine).
	Resume    bool
	Dir       string
	ResumedOn string
}

// elsewhere says the servers are not started here.
func (w Where) elsewhere() bool { return w.HelloAgent || w.Cluster }

// checkWhere checks the rules of where the plan runs.
func (p Plan) checkWhere(w Where, tops []topology.Topology) error {
	for _, check := range []func(Where, []topology.Topology) error{p.checkResume, p.checkTLSHere, p.checkAgents, p.checkCluster, p.checkHere} {
		if err := check(w, tops); err != nil {
			return err
		}
	}
	return nil
}

// checkResume refuses to finish a sweep anywhere but where it began.
func (p Plan) checkResume(w Where, _ []topology.Topology) error {
	switch {
	case !w.Resume:
	case w.Cluster && w.ResumedOn == "":
		return Errorf(Resume, "%s did not run on a cluster; resume it without -swarm", w.Dir)
	case !w.Cluster && w.ResumedOn != "":
		return Errorf(Resume, "%s ran on a cluster (%s); resume it with -swarm and the same -swarm-* flags", w.Dir, w.ResumedOn)
	}
	return nil
}

// checkAgents checks a plan whose servers run under supervisors.
func (p Plan) checkAgents(w Where, tops []topology.Topology) error {
	if !w.HelloAgent {
		if w.NginxAgent {
			return Errorf(NginxAgent, "needs -hello-agent")
		}
		return nil
	}
	switch {
	case w.Cluster:
		return Errorf(HelloAgent, "the servers run on the cluster's server node (-swarm)")
	case p.PinServer != "":
		return Errorf(PinServer, "the servers run elsewhere (-hello-agent); pin them there")
	case w.FreePorts:
		return Errorf(FreePorts, "with -hello-agent the servers listen on the reference ports")
	case !w.NginxAgent && slices.ContainsFunc(tops, topology.Topology.ViaNginx):
		return Errorf(NginxAgent, "topologies through nginx need it with -hello-agent")
	case slices.ContainsFunc(p.TargetList(), func(t string) bool { return t != results.TargetGo }):
		return Errorf(Targets, "with -hello-agent only go runs (the agents run cmd/hello)")
	case p.Isolation == results.IsolateNetns:
		return Errorf(Isolate, "netns: the servers run elsewhere (-hello-agent); use -isolate none")
	}
	return nil
}

// checkCluster refuses what a sweep on a cluster cannot do yet.
func (p Plan) checkCluster(w Where, _ []topology.Topology) error {
	if !w.Cluster {
		return nil
	}
	switch {
	case w.FreePorts:
		return Errorf(FreePorts, "on the cluster the servers listen on the reference ports of the server node")
	case p.PinLoad != "" || p.PinServer != "":
		return Errorf(CPUs, "the servers and the load have nodes of their own on the cluster; give no CPU lists")
	case p.Isolation == results.IsolateNetns:
		return Errorf(Isolate, "netns: on the cluster the servers and the load are on different nodes; use -isolate none")
	case p.LinkDelay > 0:
		return Errorf(LinkDelay, "not on the cluster")
	}
	for _, l := range p.LoadList() {
		if l != results.LoadBuiltin {
			return Errorf(Load, "%s: on the cluster the load is the built-in engine (-load builtin)", l)
		}
	}
	for _, t := range p.TargetList() {
		if t != results.TargetGo {
			return Errorf(Targets, "%s: on the cluster only cmd/hello (go) runs yet", t)
		}
	}
	for _, sc := range p.Schedules {
		if sc.Probe || sc.Requests > 0 {
			return Errorf(Requests, "schedules bounded by a request count or probes do not run on the cluster yet; give -duration and -rate")
		}
	}
	return nil
}

// checkHere checks what runs only where the servers are started here.
func (p Plan) checkHere(w Where, _ []topology.Topology) error {
	if ks := p.KeepaliveList(); (w.NginxAgent || w.Cluster) && (len(ks) > 1 || ks[0].Or() != results.DefaultKeepalive) {
		return Errorf(Keepalive, "nginx runs elsewhere (-nginx-agent, -swarm) with the pool of %s it was rendered with; measure other pools with nginx here", results.DefaultKeepalive)
	}
	switch {
	case p.SpeedProbe && w.elsewhere():
		return Errorf(SpeedProbe, "it measures this machine's CPUs, and the servers run elsewhere")
	case p.LinkDelay > 0 && (p.Isolation == results.IsolateNone || w.HelloAgent):
		return Errorf(LinkDelay, "needs -isolate netns, and this run shares loopback (-isolate none)")
	case p.Paired == nil:
	case p.Paired.Own && !p.Paired.Duet && w.elsewhere():
		return Errorf(StandaloneProcess, "own: starts standalone's server here, not through agents or a cluster; give -standalone-process shared")
	case p.Paired.Duet && w.elsewhere():
		return Errorf(Design, "duet: runs its two sides' servers here, not through agents or a cluster")
	}
	return nil
}
