// Package preflight compares the machine with what a topobench run wants:
// the kernel settings of tuning/sysctl.conf, the open-files limits of
// tuning/limits.conf, the cores, and the nginx and wrk installed. For each it
// says what falling short means for a run at a given number of connections,
// and it fails only when such a run cannot work: too few open files for the
// connections, or no wrk or nginx to run.
package preflight

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/topobench/topobench/internal/nginx"
	"github.com/topobench/topobench/internal/nginxconf"
	"github.com/topobench/topobench/tuning"
)

// WantOpenFiles is limits.conf's nofile value, the reference run's.
const WantOpenFiles = 200000

// Per-process descriptor needs at -c N, beyond the connections themselves:
// wrk's threads each hold an epoll descriptor and a pipe; nginx holds its
// listeners, logs, channel and epoll; cmd/hello its listeners.
const (
	wrkExtra   = 256
	nginxExtra = 64
	helloExtra = 64
)

// Need is how many descriptors each process of a run holds at -c n. nginx
// counts two per connection — the client's and the upstream's — in case one
// worker gets them all.
type Need struct{ Wrk, Nginx, Hello int }

// OpenFilesNeed returns the descriptor needs at -c n.
func OpenFilesNeed(n int) Need {
	return Need{Wrk: n + wrkExtra, Nginx: 2*n + nginxExtra, Hello: n + helloExtra}
}

// Max is the largest per-process need.
func (n Need) Max() int { return max(n.Wrk, n.Nginx, n.Hello) }

// Total is what the three need together, against fs.file-max.
func (n Need) Total() int { return n.Wrk + n.Nginx + n.Hello }

// Options configure Check.
type Options struct {
	// Connections is the -c of the run to judge (5000 if zero).
	Connections int
	// ProcSys is where the sysctls are read ("/proc/sys" if empty).
	ProcSys string
	// SysctlConf is the file of wanted settings (the embedded sysctl.conf
	// if nil), named SysctlName in errors.
	SysctlConf io.Reader
	SysctlName string
	// Tools are the programs the run needs (Wrk, Nginx); nil means all.
	// Those it does not need are neither looked for nor reported: a plan
	// of the built-in engine runs without wrk, one without nginx
	// topologies without nginx.
	Tools []Tool
	// Namespaces says the servers listen in network namespaces the run
	// creates and gives a somaxconn of at least nginx's backlog: the
	// host's value then caps nothing the run listens on.
	Namespaces bool
}

// Tool is a program a run may need.
type Tool string

const (
	Wrk   Tool = "wrk"
	Nginx Tool = "nginx"
)

// AllTools are the programs a default run needs.
func AllTools() []Tool { return []Tool{Nginx, Wrk} }

func (o Options) tools() []Tool {
	if o.Tools == nil {
		return AllTools()
	}
	return o.Tools
}

// Readings are what is in effect on the machine.
type Readings struct {
	// Sysctl maps a setting's ProcPath to its value (blanks collapsed); a
	// missing key means the kernel has no such setting.
	Sysctl map[string]string
	// SysctlErr maps a ProcPath to why it could not be read.
	SysctlErr map[string]error
	// NofileSoft and NofileHard are RLIMIT_NOFILE as a child of this
	// process starts with it (ChildOpenFiles).
	NofileSoft, NofileHard uint64
	Cores                  int
	// Nginx and Wrk are "version (path)", empty when not found; the errors
	// say why.
	Nginx, Wrk       string
	NginxErr, WrkErr error
	// Tools are the programs that were looked for (Options.Tools).
	Tools []Tool
}

// Status is the verdict on one row.
type Status string

const (
	OK     Status = "ok"
	Short  Status = "short"  // falls short; the run works but differs from the reference
	Absent Status = "absent" // the kernel has no such setting
	Fatal  Status = "FATAL"  // a run at these connections cannot work
	Info   Status = "info"
)

// Row is one line of the report.
type Row struct {
	Setting  string
	Wanted   string
	InEffect string
	Status   Status
	// Note says what the setting does, or what falling short means.
	Note string
	// apply is the sysctl to write when the row falls short.
	apply *Setting
}

// Report is the verdict for a run at Connections.
type Report struct {
	Connections int
	Rows        []Row
}

// SysctlNames lists the kernel settings the report checked (the rows named
// like net.core.somaxconn), to record their values with a run.
func (r Report) SysctlNames() []string {
	var names []string
	for _, row := range r.Rows {
		if strings.Contains(row.Setting, ".") && !strings.Contains(row.Setting, " ") {
			names = append(names, row.Setting)
		}
	}
	return names
}

// Fatal returns an error naming every row that makes the run impossible.
func (r Report) Fatal() error {
	var why []string
	for _, row := range r.Rows {
		if row.Status == Fatal {
			why = append(why, row.Setting+": "+row.Note)
		}
	}
	if len(why) == 0 {
		return nil
	}
	return fmt.Errorf("a run at -c %d cannot work: %s", r.Connections, strings.Join(why, "; "))
}

// ToApply returns the sysctl settings whose value in effect falls short of
// the wanted one.
func (r Report) ToApply() []Setting {
	var out []Setting
	for _, row := range r.Rows {
		if row.apply != nil {
			out = append(out, *row.apply)
		}
	}
	return out
}

// Write prints the report as a table.
func (r Report) Write(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SETTING\tWANTED\tIN EFFECT\tSTATUS\tWHAT IT MEANS FOR -c "+strconv.Itoa(r.Connections))
	for _, row := range r.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", row.Setting, dash(row.Wanted), dash(row.InEffect), row.Status, row.Note)
	}
	return tw.Flush()
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Check reads what is in effect on this machine and judges it for a run at
// opt.Connections. Its error is about reading the wanted settings; the
// verdict is Report.Fatal.
func Check(ctx context.Context, opt Options) (Report, error) {
	settings, err := Wanted(opt)
	if err != nil {
		return Report{}, err
	}
	rep := Evaluate(settings, ReadTools(ctx, settings, opt.ProcSys, opt.tools()), opt.Connections)
	if opt.Namespaces {
		rep.inNamespaces()
	}
	return rep, nil
}

// inNamespaces lifts the somaxconn verdict for a run whose servers listen
// in namespaces of its own, which get the backlog whatever the host has.
func (r *Report) inNamespaces() {
	for i := range r.Rows {
		row := &r.Rows[i]
		if row.Setting == "net.core.somaxconn" && row.Status == Fatal {
			row.Status = Short
			row.Note = fmt.Sprintf("the host's %s would cap nginx's listen backlog of %d; the run's network namespaces get %d", row.InEffect, nginxconf.Backlog(r.Connections), nginxconf.Backlog(r.Connections))
		}
	}
}

// Wanted parses opt.SysctlConf, or the embedded sysctl.conf.
func Wanted(opt Options) ([]Setting, error) {
	r, name := opt.SysctlConf, opt.SysctlName
	if r == nil {
		b, err := tuning.Files.ReadFile("sysctl.conf")
		if err != nil {
			return nil, err
		}
		r, name = bytes.NewReader(b), "sysctl.conf"
	}
	if name == "" {
		name = "sysctl.conf"
	}
	return ParseSysctl(r, name)
}

// Read collects the readings for settings from procSys ("/proc/sys" if
// empty) and from the running process and PATH, looking for every tool.
func Read(ctx context.Context, settings []Setting, procSys string) Readings {
	return ReadTools(ctx, settings, procSys, AllTools())
}

// ReadTools is Read looking only for tools (nil: all).
func ReadTools(ctx context.Context, settings []Setting, procSys string, tools []Tool) Readings {
	if procSys == "" {
		procSys = "/proc/sys"
	}
	rd := Readings{Cores: runtime.NumCPU()}
	rd.Sysctl, rd.SysctlErr = ReadSysctls(settings, procSys)
	// What a child gets, which is what wrk and the servers will have;
	// this process's own limit, if no child can be started.
	if soft, hard, err := ChildOpenFiles(ctx); err == nil {
		rd.NofileSoft, rd.NofileHard = soft, hard
	} else {
		var rl syscall.Rlimit
		if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err == nil {
			rd.NofileSoft, rd.NofileHard = rl.Cur, rl.Max
		}
	}
	if tools == nil {
		tools = AllTools()
	}
	rd.Tools = tools
	if slices.Contains(tools, Nginx) {
		if bin, err := nginx.Find(); err != nil {
			rd.NginxErr = err
		} else if v, err := nginx.GetVersion(ctx, bin); err != nil {
			rd.NginxErr = err
		} else {
			rd.Nginx = v.String() + " (" + bin + ")"
		}
	}
	if slices.Contains(tools, Wrk) {
		rd.Wrk, rd.WrkErr = wrkVersion(ctx)
	}
	return rd
}

// ReadSysctls reads the value in effect of each setting under procSys,
// keyed by ProcPath. Settings the kernel lacks are left out of both maps.
func ReadSysctls(settings []Setting, procSys string) (values map[string]string, errs map[string]error) {
	values, errs = map[string]string{}, map[string]error{}
	for _, s := range settings {
		b, err := os.ReadFile(filepath.Join(procSys, s.ProcPath()))
		switch {
		case err == nil:
			values[s.ProcPath()] = strings.Join(strings.Fields(string(b)), " ")
		case errors.Is(err, os.ErrNotExist):
		default:
			errs[s.ProcPath()] = err
		}
	}
	return values, errs
}

var wrkVersionRE = regexp.MustCompile(`^wrk (\S+)`)

// wrkVersion runs "wrk -v", which prints its version and exits non-zero.
func wrkVersion(ctx context.Context) (string, error) {
	bin, err := exec.LookPath("wrk")
	if err != nil {
		return "", errors.New("wrk not found in PATH (install it: .ci/install-tools)")
	}
	out, _ := exec.CommandContext(ctx, bin, "-v").CombinedOutput()
	m := wrkVersionRE.FindSubmatch(out)
	if m == nil {
		return "", fmt.Errorf("%s -v printed no version: %q", bin, proc1(out))
	}
	return string(m[1]) + " (" + bin + ")", nil
}

func proc1(b []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return s
}

// Evaluate judges readings against the wanted settings for a run at -c n
// (5000 if zero). It is pure, so the verdicts are testable with made-up
// readings.
func Evaluate(settings []Setting, rd Readings, n int) Report {
	if n <= 0 {
		n = 5000
	}
	need := OpenFilesNeed(n)
	rep := Report{Connections: n}
	rep.Rows = append(rep.Rows, openFiles(rd, need, n)...)
	for i := range settings {
		rep.Rows = append(rep.Rows, sysctlRow(&settings[i], rd, need, n))
	}
	rep.Rows = append(rep.Rows, Row{
		Setting: "cores", InEffect: strconv.Itoa(rd.Cores), Status: Info,
		Note: "wrk, nginx and cmd/hello share them; GOMAXPROCS above this oversubscribes",
	})
	tools := rd.Tools
	if tools == nil {
		tools = AllTools()
	}
	if slices.Contains(tools, Nginx) {
		rep.Rows = append(rep.Rows, tool("nginx", rd.Nginx, rd.NginxErr, "every topology but standalone runs through it"))
	}
	if slices.Contains(tools, Wrk) {
		rep.Rows = append(rep.Rows, tool("wrk", rd.Wrk, rd.WrkErr, "the load generator"))
	}
	return rep
}

func tool(name, version string, err error, why string) Row {
	if version == "" {
		if err == nil {
			err = errors.New("not found")
		}
		return Row{Setting: name, InEffect: "missing", Status: Fatal, Note: err.Error() + "; " + why}
	}
	return Row{Setting: name, InEffect: version, Status: Info, Note: why}
}

func openFiles(rd Readings, need Need, n int) []Row {
	want := strconv.Itoa(WantOpenFiles)
	soft := Row{Setting: "open files (soft)", Wanted: want, InEffect: fmtLimit(rd.NofileSoft)}
	switch {
	case rd.NofileSoft >= uint64(need.Wrk):
		soft.Status = OK
		soft.Note = fmt.Sprintf("wrk starts with it and needs ~%d", need.Wrk)
	case rd.NofileHard >= uint64(need.Wrk):
		soft.Status = Short
		soft.Note = fmt.Sprintf("wrk starts with it and needs ~%d: topobench compare raises it to the hard limit for its children (ulimit -n %d does it by hand)", need.Wrk, min(rd.NofileHard, WantOpenFiles))
	default:
		soft.Status = Fatal
		soft.Note = fmt.Sprintf("wrk needs ~%d and the hard limit does not allow it", need.Wrk)
	}
	hard := Row{Setting: "open files (hard)", Wanted: want, InEffect: fmtLimit(rd.NofileHard)}
	switch {
	case rd.NofileHard >= WantOpenFiles:
		hard.Status = OK
		hard.Note = fmt.Sprintf("an nginx worker may need ~%d (2 per proxied connection)", need.Nginx)
	case rd.NofileHard >= uint64(need.Max()):
		hard.Status = Short
		hard.Note = fmt.Sprintf("enough for -c %d: an nginx worker may need ~%d (2 per proxied connection), wrk ~%d, cmd/hello ~%d; tops out near -c %d", n, need.Nginx, need.Wrk, need.Hello, maxConnections(rd.NofileHard))
	default:
		hard.Status = Fatal
		hard.Note = fmt.Sprintf("an nginx worker may need ~%d (2 per proxied connection) but no process may open more than %d; use -c %d or less, or raise the limit (limits.conf)", need.Nginx, rd.NofileHard, maxConnections(rd.NofileHard))
	}
	fitted := nginxconf.FitRlimitNofile(rd.NofileHard)
	// Follows from the hard limit; the verdict is on that row.
	worker := Row{Setting: "nginx worker_rlimit_nofile", Wanted: want, InEffect: strconv.Itoa(fitted), Status: Info}
	switch {
	case fitted >= WantOpenFiles:
		worker.Note = "as in the reference run"
	case fitted < need.Nginx:
		worker.Note = fmt.Sprintf("fitted to the hard limit; short of the ~%d a worker may need", need.Nginx)
	default:
		worker.Note = fmt.Sprintf("fitted to the hard limit; covers the ~%d a worker may need", need.Nginx)
	}
	return []Row{soft, hard, worker}
}

// maxConnections is the largest -c whose needs fit a hard limit.
func maxConnections(hard uint64) int {
	if hard > 1<<30 {
		return 1 << 29
	}
	return max(0, (int(hard)-nginxExtra)/2)
}

func fmtLimit(v uint64) string {
	if v == ^uint64(0) {
		return "unlimited"
	}
	return strconv.FormatUint(v, 10)
}

// rule is how a setting's value in effect compares with the wanted one.
type rule int

const (
	exact   rule = iota
	atLeast      // more is as good: capacities
	atMost       // less is as good: timeouts, retries
	ports        // a "low high" range at least as wide
	nonzero      // any enabled value (tcp_tw_reuse 1 or 2)
)

// ruleFor knows the settings of sysctl.conf; unknown ones must match exactly.
func ruleFor(name string) rule {
	switch name {
	case "fs.file-max", "fs.nr_open", "net.core.somaxconn", "net.core.netdev_max_backlog",
		"net.core.rmem_max", "net.core.wmem_max", "net.ipv4.tcp_max_syn_backlog",
		"net.ipv4.tcp_max_tw_buckets", "vm.min_free_kbytes":
		return atLeast
	case "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_time",
		"net.ipv4.tcp_syn_retries", "net.ipv4.tcp_synack_retries":
		return atMost
	case "net.ipv4.ip_local_port_range":
		return ports
	case "net.ipv4.tcp_tw_reuse":
		return nonzero
	}
	return exact
}

func sysctlRow(s *Setting, rd Readings, need Need, n int) Row {
	row := Row{Setting: s.Name(), Wanted: s.Value, Note: firstSentence(s.Comment)}
	if err, ok := rd.SysctlErr[s.ProcPath()]; ok {
		row.Status, row.InEffect, row.Note = Absent, "unreadable", err.Error()
		return row
	}
	got, ok := rd.Sysctl[s.ProcPath()]
	if !ok {
		row.Status, row.InEffect = Absent, "no such setting"
		row.Note = "this kernel (or network namespace) does not have it"
		return row
	}
	row.InEffect = got
	if meets(ruleFor(s.Name()), got, s.Value) {
		row.Status = OK
	} else {
		row.Status = Short
		row.apply = s
		if why := shortfall(s.Name(), got, need, n); why != "" {
			row.Note = why
		}
	}
	// Limits the run cannot live with, whatever the reference wanted.
	switch s.Name() {
	case "fs.file-max":
		if v, err := strconv.ParseUint(got, 10, 64); err == nil && v < uint64(need.Total()) {
			row.Status = Fatal
			row.Note = fmt.Sprintf("wrk, nginx and cmd/hello together hold ~%d descriptors at -c %d", need.Total(), n)
		}
	case "net.core.somaxconn":
		// The kernel caps every listen backlog at it, silently: nginx's
		// (sized to the connections) and cmd/hello's.
		if v, err := strconv.Atoi(got); err == nil && v < nginxconf.Backlog(n) {
			row.Status = Fatal
			row.Note = fmt.Sprintf("%d caps nginx's listen backlog of %d (-connections %d): a burst of connects overflows it; raise it (sysctl -w net.core.somaxconn=%s, or topobench preflight -apply) or lower -connections", v, nginxconf.Backlog(n), n, s.Value)
		}
	case "net.ipv4.ip_local_port_range":
		if lo, hi, ok := portRange(got); ok && hi-lo+1 < n {
			row.Status = Fatal
			row.Note = fmt.Sprintf("wrk needs one ephemeral port per connection (%d) and the range has %d", n, hi-lo+1)
		}
	}
	return row
}

// shortfall says what a value below the wanted one means for -c n.
func shortfall(name, got string, need Need, n int) string {
	v, _ := strconv.Atoi(got)
	switch name {
	case "net.core.somaxconn":
		if v < n {
			return fmt.Sprintf("listen queues cap at %d: a burst of %d connects can overflow them and wait for SYN retries (slow or failed connects at the start)", v, n)
		}
		return fmt.Sprintf("listen queues cap at %d, enough for a burst of %d connects", v, n)
	case "net.ipv4.tcp_max_syn_backlog":
		return fmt.Sprintf("at most %d half-open connections queue during a connect burst of %d", v, n)
	case "net.ipv4.ip_local_port_range":
		lo, hi, _ := portRange(got)
		if hi-lo+1 >= 2*n {
			return fmt.Sprintf("%d ephemeral ports, enough for wrk's %d connections and nginx's upstream ones", hi-lo+1, n)
		}
		return fmt.Sprintf("%d ephemeral ports for wrk's %d connections and nginx's upstream ones: reconnects may run out", hi-lo+1, n)
	case "net.ipv4.tcp_syn_retries", "net.ipv4.tcp_synack_retries":
		return fmt.Sprintf("%d retries: a lost handshake packet is retried for longer before the connect fails", v)
	case "net.ipv4.tcp_tw_reuse":
		return "TIME_WAIT ports are not reused: reconnects can exhaust the ephemeral range"
	case "fs.nr_open":
		return fmt.Sprintf("no process can raise its open-files limit above %d", v)
	case "vm.overcommit_memory":
		return "allocations follow the overcommit heuristic; large ones can fail"
	}
	return ""
}

func meets(r rule, got, want string) bool {
	switch r {
	case atLeast, atMost:
		g, err1 := strconv.ParseInt(got, 10, 64)
		w, err2 := strconv.ParseInt(want, 10, 64)
		if err1 != nil || err2 != nil {
			return got == want
		}
		if r == atLeast {
			return g >= w
		}
		return g <= w
	case ports:
		glo, ghi, ok1 := portRange(got)
		wlo, whi, ok2 := portRange(want)
		if !ok1 || !ok2 {
			return got == want
		}
		return ghi-glo >= whi-wlo
	case nonzero:
		return got != "0"
	}
	return got == want
}

func portRange(s string) (lo, hi int, ok bool) {
	f := strings.Fields(s)
	if len(f) != 2 {
		return 0, 0, false
	}
	lo, err1 := strconv.Atoi(f[0])
	hi, err2 := strconv.Atoi(f[1])
	return lo, hi, err1 == nil && err2 == nil && lo <= hi
}

// Applied is the outcome of writing one setting.
type Applied struct {
	Setting Setting
	// Err is the kernel's refusal, if any.
	Err error
}

// Apply writes each setting under procSys ("/proc/sys" if empty) and
// returns what the kernel refused. Writing /proc/sys needs root.
func Apply(settings []Setting, procSys string) []Applied {
	if procSys == "" {
		procSys = "/proc/sys"
	}
	out := make([]Applied, 0, len(settings))
	for _, s := range settings {
		path := filepath.Join(procSys, s.ProcPath())
		// O_WRONLY without O_CREATE: a setting the kernel lacks is refused,
		// not invented.
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
		if err == nil {
			_, err = f.WriteString(s.Value + "\n")
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			err = fmt.Errorf("%s = %s: %w", s.Name(), s.Value, err)
		}
		out = append(out, Applied{Setting: s, Err: err})
	}
	return out
}

// firstSentence keeps a table note short.
func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i]
	}
	return strings.TrimSuffix(s, ".")
}
