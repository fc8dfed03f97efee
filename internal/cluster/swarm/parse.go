package swarm

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/topobench/topobench/internal/cluster"
)

// The docker CLI's outputs this package reads, each a pure function over
// what the CLI printed (testdata/ holds captured real output):
//
//	docker info --format '{{json .Swarm}}'          ParseSwarmInfo
//	docker node ls --format '{{json .}}'            ParseNodeList
//	docker node inspect ID...                       ParseNodeInspect
//	docker service ls --format '{{json .}}'         ParseServiceList
//	docker service ps --no-trunc --format '{{json .}}' SERVICE...   ParseServicePS
//	docker inspect --type task ID...                ParseTaskInspect
//	docker info --format '{{json .SystemTime}}'     ParseSystemTime
//	docker service logs [--raw] SERVICE             ParseLogLines

// SwarmInfo is the engine's swarm state.
type SwarmInfo struct {
	NodeID           string
	NodeAddr         string
	LocalNodeState   string // "inactive", "pending", "active", "error", "locked"
	ControlAvailable bool   // a manager
	Error            string
}

// ParseSwarmInfo reads `docker info --format '{{json .Swarm}}'`.
func ParseSwarmInfo(r io.Reader) (SwarmInfo, error) {
	var si SwarmInfo
	if err := json.NewDecoder(r).Decode(&si); err != nil {
		return si, fmt.Errorf("reading swarm info: %w", err)
	}
	return si, nil
}

// NodeListEntry is one line of `docker node ls --format '{{json .}}'`.
type NodeListEntry struct {
	ID            string
	Hostname      string
	Status        string // "Ready", "Down", "Unknown", "Disconnected"
	Availability  string // "Active", "Pause", "Drain"
	ManagerStatus string // "Leader", "Reachable", "" for workers
	Self          bool
	EngineVersion string
}

// jsonLines decodes one JSON object per non-empty line into a T each.
func jsonLines[T any](r io.Reader, what string) ([]T, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	var out []T
	line := 0
	for sc.Scan() {
		line++
		b := strings.TrimSpace(sc.Text())
		if b == "" {
			continue
		}
		var v T
		if err := json.Unmarshal([]byte(b), &v); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", what, line, err)
		}
		out = append(out, v)
	}
	return out, sc.Err()
}

// ParseNodeList reads `docker node ls --format '{{json .}}'`.
func ParseNodeList(r io.Reader) ([]NodeListEntry, error) {
	ns, err := jsonLines[struct {
		NodeListEntry
		Self json.RawMessage
	}](r, "node ls")
	if err != nil {
		return nil, err
	}
	out := make([]NodeListEntry, len(ns))
	for i, n := range ns {
		out[i] = n.NodeListEntry
		// Older CLIs print Self as a string.
		out[i].Self = strings.Trim(string(n.Self), `"`) == "true"
	}
	return out, nil
}

// ParseNodeInspect reads `docker node inspect ID...` (a JSON array) into
// nodes with their roles (cluster.RoleLabel), address and readiness: a
// node is ready when its status is "ready" and its availability "active".
func ParseNodeInspect(r io.Reader) ([]cluster.Node, error) {
	var raw []struct {
		ID   string
		Spec struct {
			Labels       map[string]string
			Role         string
			Availability string
		}
		Description struct{ Hostname string }
		Status      struct {
			State string
			Addr  string
		}
		ManagerStatus *struct {
			Leader bool
			Addr   string
		}
	}
	if err := json.NewDecoder(r).Decode(&raw); err != nil {
		return nil, fmt.Errorf("reading node inspect: %w", err)
	}
	nodes := make([]cluster.Node, len(raw))
	for i, n := range raw {
		addr := n.Status.Addr
		// A manager's Status.Addr can be 0.0.0.0 (moby#35437); its
		// ManagerStatus address is the one others reach it at.
		if (addr == "" || addr == "0.0.0.0") && n.ManagerStatus != nil {
			if host, _, ok := strings.Cut(n.ManagerStatus.Addr, ":"); ok {
				addr = host
			}
		}
		nodes[i] = cluster.Node{
			ID: n.ID, Hostname: n.Description.Hostname, Addr: addr,
			Roles:   cluster.ParseRoles(n.Spec.Labels[cluster.RoleLabel]),
			Ready:   n.Status.State == "ready" && n.Spec.Availability == "active",
			Manager: n.Spec.Role == "manager",
		}
	}
	return nodes, nil
}

// ServiceListEntry is one line of `docker service ls --format '{{json .}}'`.
type ServiceListEntry struct {
	ID, Name, Mode, Replicas, Image string
}

// ParseServiceList reads `docker service ls --format '{{json .}}'`.
func ParseServiceList(r io.Reader) ([]ServiceListEntry, error) {
	return jsonLines[ServiceListEntry](r, "service ls")
}

// PSEntry is one task as `docker service ps --no-trunc --format
// '{{json .}}'` prints it.
type PSEntry struct {
	ID           string
	Name         string // SERVICE.SLOT, or SERVICE.NODEID for jobs
	Node         string // hostname, empty while unassigned
	DesiredState string
	CurrentState string // "Running 3 seconds ago"
	Error        string // unquoted
}

// State is the task's current state, lower case as in task inspect:
// "pending", "running", "complete", "failed", "rejected"...
func (e PSEntry) State() string {
	s, _, _ := strings.Cut(e.CurrentState, " ")
	return strings.ToLower(s)
}

// Service is the name of the task's service.
func (e PSEntry) Service() string {
	if i := strings.LastIndexByte(e.Name, '.'); i >= 0 {
		return e.Name[:i]
	}
	return e.Name
}

// ParseServicePS reads `docker service ps --no-trunc --format '{{json .}}'`.
func ParseServicePS(r io.Reader) ([]PSEntry, error) {
	es, err := jsonLines[PSEntry](r, "service ps")
	for i := range es {
		// The CLI prints the error quoted, inside the JSON string.
		if u, uerr := strconv.Unquote(es[i].Error); uerr == nil {
			es[i].Error = u
		}
	}
	return es, err
}

// Task is a task as `docker inspect --type task` shows it.
type Task struct {
	ID, ServiceID, NodeID string
	State, Message, Err   string
	ExitCode              int
	Timestamp             time.Time // of the last state change
	DesiredState          string
}

// ParseTaskInspect reads `docker inspect --type task ID...` (a JSON array).
func ParseTaskInspect(r io.Reader) ([]Task, error) {
	var raw []struct {
		ID, ServiceID, NodeID, DesiredState string
		Status                              struct {
			Timestamp       time.Time
			State, Message  string
			Err             string
			ContainerStatus *struct{ ExitCode int }
		}
	}
	if err := json.NewDecoder(r).Decode(&raw); err != nil {
		return nil, fmt.Errorf("reading task inspect: %w", err)
	}
	ts := make([]Task, len(raw))
	for i, t := range raw {
		ts[i] = Task{
			ID: t.ID, ServiceID: t.ServiceID, NodeID: t.NodeID, DesiredState: t.DesiredState,
			State: t.Status.State, Message: t.Status.Message, Err: t.Status.Err, Timestamp: t.Status.Timestamp,
		}
		if c := t.Status.ContainerStatus; c != nil {
			ts[i].ExitCode = c.ExitCode
		}
	}
	return ts, nil
}

// Terminal reports whether a task in state s will change no more.
func Terminal(s string) bool {
	switch s {
	case "complete", "failed", "rejected", "shutdown", "orphaned", "remove":
		return true
	}
	return false
}

// Started reports whether a task in state s has started its container
// (or got past it).
func Started(s string) bool {
	return s == "running" || Terminal(s)
}

// ParseSystemTime reads `docker info --format '{{json .SystemTime}}'`.
func ParseSystemTime(r io.Reader) (time.Time, error) {
	var s string
	if err := json.NewDecoder(r).Decode(&s); err != nil {
		return time.Time{}, fmt.Errorf("reading system time: %w", err)
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("reading system time: %w", err)
	}
	return t, nil
}

// LogLine is one line of `docker service logs` without --raw:
// "SERVICE.SLOT.TASK@NODE    | text".
type LogLine struct {
	Task string // SERVICE.SLOT.TASKID as printed (the ID may be cut)
	Node string
	Text string
}

// ParseLogLines reads `docker service logs` output with its context
// prefix. Lines without one (--raw) have only Text.
func ParseLogLines(r io.Reader) ([]LogLine, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	var out []LogLine
	for sc.Scan() {
		text := sc.Text()
		ctx, msg, ok := strings.Cut(text, "| ")
		at := strings.LastIndexByte(ctx, '@')
		if !ok || at < 0 || strings.ContainsAny(strings.TrimRight(ctx, " "), " \t") {
			out = append(out, LogLine{Text: text})
			continue
		}
		ctx = strings.TrimRight(ctx, " ")
		out = append(out, LogLine{Task: ctx[:at], Node: ctx[at+1:], Text: msg})
	}
	return out, sc.Err()
}
