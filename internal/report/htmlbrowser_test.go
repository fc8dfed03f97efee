package report

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/topobench/topobench/internal/analysis/analysistest"
)

var screenshots = flag.String("screenshots", "", "directory for the browser test's full-page screenshots (default: the test's artifact directory, kept with go test -artifacts)")

// chromiumPath finds Debian's Chromium (.ci/install-tools --tests
// installs it).
func chromiumPath(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("no chromium in PATH: run .ci/install-tools --tests (Debian package chromium)")
	return ""
}

// TestHTMLInBrowser loads every case's report.html from disk in headless
// Chromium with the network off (the browser runs in a network namespace
// of its own where root can make one, and every request goes to a proxy
// on a closed loopback port either way). It fails on any JavaScript
// error, console error, request that is not the file itself, or chart
// that did not draw: the page must say "drawn N" for its N charts, and
// every chart's canvas must hold coloured pixels. It keeps a full-page
// screenshot of each page, on screen and as printed.
func TestHTMLInBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	exe := chromiumPath(t)
	for _, c := range htmlCases(t) {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, HTMLFile)
			require.NoError(t, os.WriteFile(path, renderHTML(t, c.sweeps), 0o644))
			shots := *screenshots
			if shots == "" {
				shots = t.ArtifactDir()
			}
			require.NoError(t, os.MkdirAll(shots, 0o755))
			st, problems := browse(t, exe, path, filepath.Join(shots, c.name))
			assert.Empty(t, st.Error)
			assert.Equal(t, "drawn "+st.Expected, st.Charts, "status: %s", st.Status)
			assert.Equal(t, st.Expected, fmt.Sprint(len(st.IDs)))
			require.Len(t, st.Coloured, len(st.IDs))
			for i, n := range st.Coloured {
				assert.Greater(t, n, 20, "chart %s drew no series", st.IDs[i])
			}
			assert.Empty(t, problems, "JavaScript errors or network requests")
		})
	}
}

// TestHTMLInBrowserCatches breaks a page three ways and checks that the
// browser test sees each: a script error, a chart that cannot draw,
// and a request for something that is not the file (to a closed
// loopback port).
func TestHTMLInBrowserCatches(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Chromium")
	}
	exe := chromiumPath(t)
	env, runs := analysistest.IsolatedFixture(t)
	good := string(renderHTML(t, []Sweep{sweepOf("isolated", "", env, runs)}))
	for _, c := range []struct {
		name, old, new string
		check          func(t *testing.T, st pageState, problems []string)
	}{
		{"script error", "var uPlot=function", "throw new Error(\"broken on purpose\");var uPlot=function", func(t *testing.T, st pageState, problems []string) {
			assert.Equal(t, "error", st.Charts)
			assert.Contains(t, st.Error, "uPlot did not load")
			assert.NotEmpty(t, problems)
		}},
		{"chart without its element", `<div class="chart" id="chart-1"`, `<div class="chart" id="chart-x"`, func(t *testing.T, st pageState, problems []string) {
			assert.Equal(t, "error", st.Charts)
			assert.Contains(t, st.Error, "no element for chart-1")
		}},
		{"request", "<footer>", `<footer><img alt="" src="http://127.0.0.1:9/x.png">`, func(t *testing.T, st pageState, problems []string) {
			assert.Contains(t, strings.Join(problems, "\n"), "request to http://127.0.0.1:9/x.png")
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.Contains(t, good, c.old)
			bad := strings.Replace(good, c.old, c.new, 1)
			path := filepath.Join(t.TempDir(), HTMLFile)
			require.NoError(t, os.WriteFile(path, []byte(bad), 0o644))
			st, problems := browse(t, exe, path, filepath.Join(t.TempDir(), "shot"))
			c.check(t, st, problems)
		})
	}
}

// pageState is what the page says of its charts, and what the canvases
// hold.
type pageState struct {
	Charts   string `json:"charts"`
	Expected string `json:"expected"`
	Error    string `json:"error"`
	Status   string `json:"status"`
	// Coloured counts the saturated pixels of each chart's canvas (the
	// series; axes and grid are grey).
	Coloured []int    `json:"coloured"`
	IDs      []string `json:"ids"`
}

const stateJS = `(() => {
	const root = document.documentElement;
	const els = Array.from(document.querySelectorAll(".chart"));
	return {
		charts: root.getAttribute("data-charts") || "",
		expected: root.getAttribute("data-charts-expected") || "",
		error: root.getAttribute("data-chart-error") || "",
		status: document.getElementById("chart-status").textContent,
		ids: els.map(el => el.id),
		coloured: els.map(el => {
			const c = el.querySelector("canvas");
			if (!c) return -1;
			const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
			let n = 0;
			for (let i = 0; i < d.length; i += 4) {
				const hi = Math.max(d[i], d[i+1], d[i+2]), lo = Math.min(d[i], d[i+1], d[i+2]);
				if (d[i+3] > 0 && hi - lo > 40) n++;
			}
			return n;
		}),
	};
})()`

// browse loads the page and returns what it says of its charts, and the
// script errors and requests it caused; shot.png and shot-print.png are
// its full-page screenshots.
func browse(t *testing.T, exe, path, shot string) (pageState, []string) {
	netns := os.Geteuid() == 0
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.NoSandbox, // as root
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1200, 900),
		chromedp.ProxyServer("http://127.0.0.1:9"),
		chromedp.Flag("proxy-bypass-list", "<-loopback>"),
		chromedp.ModifyCmdFunc(func(cmd *exec.Cmd) {
			cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
			if netns {
				cmd.SysProcAttr.Cloneflags = syscall.CLONE_NEWNET
			}
		}),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(ctx, 90*time.Second)
	defer cancelTimeout()

	var mu sync.Mutex
	var problems []string
	note := func(s string) {
		mu.Lock()
		problems = append(problems, s)
		mu.Unlock()
	}
	cctx, stopConsole := context.WithCancel(ctx)
	defer stopConsole()
	messages := chromedp.Console(cctx)
	require.NoError(t, chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			if u := e.Request.URL; !strings.HasPrefix(u, "file://") && !strings.HasPrefix(u, "data:") {
				note("request to " + u)
			}
		}
	}))
	_, err := chromedp.Call(ctx, network.Enable, network.EnableParams{})
	require.NoError(t, err)
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate("file://"+path)))

	st, err := chromedp.Run(ctx, chromedp.Poll[pageState](`(() => { const s = `+stateJS+`; return s.charts ? s : null; })()`,
		chromedp.WithPollingTimeout(30*time.Second)))
	require.NoError(t, err, "the page never said its charts were drawn")
	full, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(shot+".png", full, 0o644))
	_, err = chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{Media: "print"})
	require.NoError(t, err)
	printed, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(shot+"-print.png", printed, 0o644))
	t.Logf("%s: %s (netns %v); screenshots %s.png and %s-print.png", filepath.Base(path), st.Charts, netns, shot, shot)
	// Every message so far is queued: read them, and stop when the queue
	// has been quiet for a moment.
	time.AfterFunc(time.Second, stopConsole)
	for m, err := range messages {
		if err != nil {
			break
		}
		if m.IsException() || m.Type == "error" || m.Type == "assert" {
			note(m.String())
		}
	}

	mu.Lock()
	defer mu.Unlock()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatal("browser test timed out")
	}
	return st, slices.Clone(problems)
}
