package reports

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stepdoctor/stepdoctor/engine"
)

// The browser check opens reports in Debian's headless chromium through the
// DevTools protocol over --remote-debugging-pipe (no port, no library),
// takes PNG screenshots at desktop and phone width and in print media, and
// fails on any network request other than the report file itself, on any
// console message of level error or warning, on an uncaught exception and
// on content that reaches past the viewport's right edge outside a
// scrolling box (a page that scrolls sideways on a phone). It skips, saying so, when no
// chromium is installed. STEPDOCTOR_CHROMIUM names the binary;
// STEPDOCTOR_SCREENSHOTS names a directory to keep the PNGs in (a temporary
// directory otherwise).

var chromiumFlags = []string{
	"--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
	"--disable-component-update", "--disable-sync", "--no-first-run", "--no-default-browser-check",
	"--disable-extensions", "--disable-dev-shm-usage", "--hide-scrollbars", "--mute-audio",
	"--remote-debugging-pipe",
}

func findChromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("STEPDOCTOR_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("browser check skipped: no chromium found (install Debian's chromium: apt-get install -y chromium, or set STEPDOCTOR_CHROMIUM)")
	return ""
}

// cdp is a minimal DevTools-protocol client over chromium's debugging pipe:
// requests go to the browser's fd 3, NUL-terminated JSON messages come back
// on its fd 4.
type cdp struct {
	w      io.Writer
	mu     sync.Mutex
	nextID int
	wait   map[int]chan cdpMsg
	events chan cdpMsg
	done   chan struct{}
	err    error
}

type cdpMsg struct {
	ID        int             `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *cdpError       `json:"error,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
}

type cdpError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func newCDP(w io.Writer, r io.Reader) *cdp {
	c := &cdp{w: w, wait: map[int]chan cdpMsg{}, events: make(chan cdpMsg, 4096), done: make(chan struct{})}
	go func() {
		defer close(c.done)
		br := bufio.NewReaderSize(r, 1<<20)
		for {
			raw, err := br.ReadBytes(0)
			if err != nil {
				c.err = err
				return
			}
			var m cdpMsg
			if err := json.Unmarshal(raw[:len(raw)-1], &m); err != nil {
				c.err = fmt.Errorf("decode devtools message: %w", err)
				return
			}
			if m.ID != 0 {
				c.mu.Lock()
				ch := c.wait[m.ID]
				delete(c.wait, m.ID)
				c.mu.Unlock()
				if ch != nil {
					ch <- m
				}
				continue
			}
			select {
			case c.events <- m:
			default: // drop when nobody reads; the checks read continuously
			}
		}
	}()
	return c
}

// call sends one command (to the browser when session is "") and waits for
// its result.
func (c *cdp) call(ctx context.Context, session, method string, params any, result any) error {
	if params == nil {
		params = struct{}{}
	}
	p, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("encode %s: %w", method, err)
	}
	ch := make(chan cdpMsg, 1)
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	c.wait[id] = ch
	msg, err := json.Marshal(cdpMsg{ID: id, Method: method, Params: p, SessionID: session})
	if err == nil {
		_, err = c.w.Write(append(msg, 0))
	}
	c.mu.Unlock()
	if err != nil {
		return fmt.Errorf("send %s: %w", method, err)
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return fmt.Errorf("call %s: %s (%d)", method, m.Error.Message, m.Error.Code)
		}
		if result != nil {
			if err := json.Unmarshal(m.Result, result); err != nil {
				return fmt.Errorf("decode %s result: %w", method, err)
			}
		}
		return nil
	case <-c.done:
		return fmt.Errorf("call %s: browser closed the pipe: %w", method, c.err)
	case <-ctx.Done():
		return fmt.Errorf("call %s: %w", method, ctx.Err())
	}
}

// browser is one headless chromium with a fresh profile.
type browser struct {
	cmd    *exec.Cmd
	c      *cdp
	stderr *bytes.Buffer
}

func startBrowser(t *testing.T, bin string) *browser {
	t.Helper()
	toBrowser, browserIn, err := os.Pipe() // browser reads fd 3
	if err != nil {
		t.Fatal(err)
	}
	browserOut, fromBrowser, err := os.Pipe() // browser writes fd 4
	if err != nil {
		t.Fatal(err)
	}
	args := append(append([]string{}, chromiumFlags...), "--user-data-dir="+t.TempDir(), "about:blank")
	cmd := exec.Command(bin, args...)
	cmd.ExtraFiles = []*os.File{toBrowser, fromBrowser}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	_ = toBrowser.Close()
	_ = fromBrowser.Close()
	b := &browser{cmd: cmd, c: newCDP(browserIn, browserOut), stderr: &stderr}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = b.c.call(ctx, "", "Browser.close", nil, nil)
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		_ = browserIn.Close()
		_ = browserOut.Close()
	})
	return b
}

type viewport struct {
	name   string
	width  int
	height int
	mobile bool
	print  bool
}

type pageProblems struct {
	requests []string // URLs other than the page itself
	console  []string // console errors and warnings, exceptions, log errors
	wide     string   // elements reaching past the viewport's right edge
	// clipped counts rank tables wider than their scrolling box: columns
	// a reader has to scroll sideways to see.
	clipped int
}

// clippedJS counts the rank tables whose scrolling box cuts them off.
const clippedJS = `Array.from(document.querySelectorAll("table.ranks")).filter((t) => t.parentElement.scrollWidth > t.parentElement.clientWidth + 1).length`

// wideJS lists up to five of the innermost elements that reach past the
// right edge of the viewport, to say what makes a page scroll sideways.
const wideJS = `((W) => {
	const out = [];
	const walk = (e) => {
		for (const c of e.children) {
			if (c.getBoundingClientRect().right > W + 1) out.push(c);
			if (getComputedStyle(c).overflowX === "visible") walk(c);
		}
	};
	walk(document.body);
	return out.slice(-5).map(e => e.tagName.toLowerCase() + "." + (e.className.baseVal ?? e.className) + " " + Math.round(e.getBoundingClientRect().right) + "px: " + e.textContent.slice(0, 40)).join(" | ");
})(VIEWPORT)`

// shoot opens file in a new tab with the viewport, waits for load, checks
// for problems, and writes a full-page PNG to out.
func (b *browser) shoot(ctx context.Context, file string, vp viewport, out string) (pageProblems, int, error) {
	var pp pageProblems
	var target struct {
		TargetID string `json:"targetId"`
	}
	if err := b.c.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &target); err != nil {
		return pp, 0, err
	}
	defer func() {
		_ = b.c.call(context.Background(), "", "Target.closeTarget", map[string]any{"targetId": target.TargetID}, nil)
	}()
	var att struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.c.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &att); err != nil {
		return pp, 0, err
	}
	s := att.SessionID
	for _, m := range []string{"Network.enable", "Runtime.enable", "Log.enable", "Page.enable"} {
		if err := b.c.call(ctx, s, m, nil, nil); err != nil {
			return pp, 0, err
		}
	}
	if err := b.c.call(ctx, s, "Emulation.setDeviceMetricsOverride", map[string]any{
		"width": vp.width, "height": vp.height, "deviceScaleFactor": 1, "mobile": vp.mobile,
	}, nil); err != nil {
		return pp, 0, err
	}
	media := "screen"
	if vp.print {
		media = "print"
	}
	if err := b.c.call(ctx, s, "Emulation.setEmulatedMedia", map[string]any{"media": media}, nil); err != nil {
		return pp, 0, err
	}
	pageURL := (&url.URL{Scheme: "file", Path: file}).String()
	if err := b.c.call(ctx, s, "Page.navigate", map[string]any{"url": pageURL}, nil); err != nil {
		return pp, 0, err
	}
	loaded := false
	for !loaded {
		select {
		case ev := <-b.c.events:
			if ev.SessionID != s {
				continue
			}
			pp.note(ev, pageURL)
			loaded = ev.Method == "Page.loadEventFired"
		case <-ctx.Done():
			return pp, 0, fmt.Errorf("wait for load of %s: %w", pageURL, ctx.Err())
		case <-b.c.done:
			return pp, 0, fmt.Errorf("wait for load: browser closed the pipe: %w", b.c.err)
		}
	}
	// The page has no scripts; the evaluation below runs in DevTools'
	// context, which the page's Content-Security-Policy does not govern.
	var eval struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
	}
	if err := b.c.call(ctx, s, "Runtime.evaluate", map[string]any{
		"expression":    "JSON.stringify([document.documentElement.scrollWidth, document.documentElement.scrollHeight, document.images.length, document.scripts.length, " + strings.Replace(wideJS, "VIEWPORT", strconv.Itoa(vp.width), 1) + ", " + clippedJS + "])",
		"returnByValue": true,
	}, &eval); err != nil {
		return pp, 0, err
	}
	var dims [6]any
	var js string
	if err := json.Unmarshal(eval.Result.Value, &js); err != nil {
		return pp, 0, fmt.Errorf("decode page size: %w", err)
	}
	if err := json.Unmarshal([]byte(js), &dims); err != nil {
		return pp, 0, fmt.Errorf("decode page size: %w", err)
	}
	n := func(i int) int { f, _ := dims[i].(float64); return int(f) }
	if n(2) != 0 || n(3) != 0 {
		pp.console = append(pp.console, fmt.Sprintf("page has %d images and %d scripts, want none", n(2), n(3)))
	}
	pp.wide, _ = dims[4].(string)
	pp.clipped = n(5)
	height := min(max(n(1), vp.height), 16000)
	var shot struct {
		Data string `json:"data"`
	}
	if err := b.c.call(ctx, s, "Page.captureScreenshot", map[string]any{
		"format": "png", "captureBeyondViewport": true,
		"clip": map[string]any{"x": 0, "y": 0, "width": vp.width, "height": height, "scale": 1},
	}, &shot); err != nil {
		return pp, 0, err
	}
	img, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil {
		return pp, 0, fmt.Errorf("decode screenshot: %w", err)
	}
	if _, err := png.Decode(bytes.NewReader(img)); err != nil {
		return pp, 0, fmt.Errorf("decode screenshot png: %w", err)
	}
	if err := os.WriteFile(out, img, 0o644); err != nil {
		return pp, 0, fmt.Errorf("write screenshot: %w", err)
	}
	// Drain events that arrived after load (late requests, console).
	deadline := time.After(300 * time.Millisecond)
	for {
		select {
		case ev := <-b.c.events:
			if ev.SessionID == s {
				pp.note(ev, pageURL)
			}
		case <-deadline:
			return pp, n(0), nil
		}
	}
}

func (pp *pageProblems) note(ev cdpMsg, pageURL string) {
	switch ev.Method {
	case "Network.requestWillBeSent":
		var p struct {
			Request struct {
				URL string `json:"url"`
			} `json:"request"`
		}
		if json.Unmarshal(ev.Params, &p) == nil && p.Request.URL != pageURL {
			pp.requests = append(pp.requests, p.Request.URL)
		}
	case "Runtime.consoleAPICalled":
		var p struct {
			Type string            `json:"type"`
			Args []json.RawMessage `json:"args"`
		}
		if json.Unmarshal(ev.Params, &p) == nil && (p.Type == "error" || p.Type == "warning" || p.Type == "assert") {
			pp.console = append(pp.console, fmt.Sprintf("console.%s %s", p.Type, ev.Params))
		}
	case "Runtime.exceptionThrown":
		pp.console = append(pp.console, "exception "+string(ev.Params))
	case "Log.entryAdded":
		var p struct {
			Entry struct {
				Level  string `json:"level"`
				Source string `json:"source"`
				Text   string `json:"text"`
				URL    string `json:"url"`
			} `json:"entry"`
		}
		if json.Unmarshal(ev.Params, &p) == nil && (p.Entry.Level == "error" || p.Entry.Level == "warning") {
			pp.console = append(pp.console, fmt.Sprintf("log %s (%s): %s %s", p.Entry.Level, p.Entry.Source, p.Entry.Text, p.Entry.URL))
		}
	}
}

// browserReports are the reports the check opens: real reports of traces
// (the shared starved and well-utilised ones and the 8-rank DLRM job when
// present, the project's own sample trace always) and the hand-made fixture with every chart.
func browserReports(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	traces := map[string]string{
		"sample_dataloader_bound":  "../testdata/traces/dataloader_bound.pt.trace.json",
		"shared_resnet50_workers0": "../../shared/traces/kineto/tb_plugin/samples/resnet50_num_workers_0/worker0.pt.trace.json.gz",
		"shared_hta_ns_resolution": "../../shared/traces/hta/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
		// Eight ranks in one report: collapsed per-rank sections, the rank
		// table fully visible.
		"shared_dlrm_8_ranks": "../../shared/traces/param/dlrm_kineto",
	}
	for name, path := range traces {
		if _, err := os.Stat(path); err != nil {
			t.Logf("browser check: %s not present, skipping that report", path)
			continue
		}
		r, err := engine.Analyze(context.Background(), engine.Options{Paths: []string{path}})
		if err != nil {
			t.Fatalf("analyze %s: %v", path, err)
		}
		out[name] = writeReport(t, dir, name, r)
	}
	out["fixture_gpu_training"] = writeReport(t, dir, "fixture_gpu_training", gpuTraining())
	out["fixture_hostile"] = writeReport(t, dir, "fixture_hostile", hostile())
	return out
}

func writeReport(t *testing.T, dir, name string, r *engine.Result) string {
	t.Helper()
	path := filepath.Join(dir, name+".html")
	if err := WriteFile(path, func(w io.Writer) error { return HTML(w, r) }); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestBrowserRendersReports(t *testing.T) {
	if testing.Short() {
		t.Skip("browser check skipped in -short mode")
	}
	bin := findChromium(t)
	dir := os.Getenv("STEPDOCTOR_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	reports := browserReports(t, dir)
	b := startBrowser(t, bin)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	var version struct {
		Product string `json:"product"`
	}
	if err := b.c.call(ctx, "", "Browser.getVersion", nil, &version); err != nil {
		t.Fatalf("talk to chromium: %v\nstderr:\n%s", err, b.stderr.String())
	}
	t.Logf("browser: %s", version.Product)
	viewports := []viewport{
		{name: "desktop", width: 1280, height: 900},
		{name: "phone", width: 390, height: 844, mobile: true},
		{name: "print", width: 800, height: 1100, print: true},
	}
	names := make([]string, 0, len(reports))
	for n := range reports {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, name := range names {
		for _, vp := range viewports {
			if vp.print && name != "shared_resnet50_workers0" && name != "sample_dataloader_bound" {
				continue // print layout: one real report is enough
			}
			png := filepath.Join(dir, name+"."+vp.name+".png")
			start := time.Now()
			pp, scrollW, err := b.shoot(ctx, reports[name], vp, png)
			if err != nil {
				t.Fatalf("%s (%s): %v\nstderr:\n%s", name, vp.name, err, b.stderr.String())
			}
			for _, u := range pp.requests {
				t.Errorf("%s (%s): page requested %s; a report must load nothing", name, vp.name, u)
			}
			for _, m := range pp.console {
				t.Errorf("%s (%s): %s", name, vp.name, m)
			}
			if pp.clipped > 0 && vp.width >= 1280 {
				t.Errorf("%s (%s): %d rank table(s) cut off by their scrolling box at %d px", name, vp.name, pp.clipped, vp.width)
			}
			if pp.wide != "" {
				t.Errorf("%s (%s): content reaches past the %d px viewport (document %d px wide): %s", name, vp.name, vp.width, scrollW, pp.wide)
			}
			t.Logf("screenshot: %s (%s)", png, time.Since(start).Round(time.Millisecond))
		}
	}
}

// TestBrowserCheckCatchesProblems proves the check can fail: a page that
// loads an image and logs a console error is caught.
func TestBrowserCheckCatchesProblems(t *testing.T) {
	if testing.Short() {
		t.Skip("browser check skipped in -short mode")
	}
	bin := findChromium(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.html")
	page := `<!DOCTYPE html><html><head><meta charset="utf-8"><title>bad</title></head><body>
<img src="http://127.0.0.1:9/x.png" alt=""><script>console.error("boom")</script>
<div style="width:2000px">wide</div></body></html>`
	if err := os.WriteFile(bad, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	b := startBrowser(t, bin)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pp, scrollW, err := b.shoot(ctx, bad, viewport{name: "phone", width: 390, height: 844, mobile: true}, filepath.Join(dir, "bad.png"))
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("shoot: %v\nstderr:\n%s", err, b.stderr.String())
	}
	if len(pp.requests) == 0 || !strings.Contains(strings.Join(pp.requests, " "), "127.0.0.1:9") {
		t.Errorf("image request not caught: %q", pp.requests)
	}
	if !strings.Contains(strings.Join(pp.console, " "), "boom") {
		t.Errorf("console error not caught: %q", pp.console)
	}
	if scrollW <= 390 || !strings.Contains(pp.wide, "div") {
		t.Errorf("wide page not caught: scroll width %d, wide elements %q", scrollW, pp.wide)
	}
}

// annotatedTracePage is a self-contained page that reads an annotated
// trace next to it (sync XHR over file://) the way a trace viewer would
// and prints what it finds: the stepdoctor process, its threads, the
// instants and how many of them lie inside an event of their own track,
// and the flow starts and bound ends.
const annotatedTracePage = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>annotated trace</title></head><body><pre id="out">not run</pre>
<script>
const out = document.getElementById("out");
try {
  const x = new XMLHttpRequest();
  x.open("GET", TRACE, false);
  x.send();
  const doc = JSON.parse(x.responseText);
  const evs = Array.isArray(doc) ? doc : doc.traceEvents;
  let pid = null;
  for (const e of evs) if (e.ph === "M" && e.name === "process_name" && e.args && e.args.name === "stepdoctor") pid = e.pid;
  const own = new Map();
  for (const e of evs) if (e.ph === "X" && e.cat !== "stepdoctor") { const k = e.pid + "/" + e.tid; if (!own.has(k)) own.set(k, []); own.get(k).push([e.ts, e.ts + (e.dur || 0)]); }
  let instants = 0, onEvent = 0, starts = 0, ends = 0, threads = 0;
  for (const e of evs) {
    if (e.cat !== "stepdoctor") { if (e.ph === "M" && e.name === "thread_name" && e.pid === pid) threads++; continue; }
    if (e.ph === "i" && e.s === "t") { instants++; if ((own.get(e.pid + "/" + e.tid) || []).some(([s, t]) => s <= e.ts && e.ts <= t)) onEvent++; }
    if (e.ph === "s") starts++;
    if (e.ph === "f" && e.bp === "e") ends++;
  }
  out.textContent = "process=" + (pid !== null) + " threads=" + threads + " instants=" + instants + " on_event=" + onEvent + " flow_starts=" + starts + " flow_ends=" + ends;
} catch (err) { out.textContent = "error: " + err; }
</script></body></html>`

// TestBrowserReadsAnnotatedTrace opens annotated traces (the sample trace,
// and the shared NCCL trace when present) in headless chromium
// through annotatedTracePage and reads the counts back from the DOM
// (--dump-dom): one instant per example event, each inside an event of
// its track, one flow per example, one thread per finding.
func TestBrowserReadsAnnotatedTrace(t *testing.T) {
	if testing.Short() {
		t.Skip("browser check skipped in -short mode")
	}
	bin := findChromium(t)
	dir, err := filepath.Abs(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	traces := []string{
		filepath.Join("..", "testdata", "traces", "dataloader_bound.pt.trace.json"),
		filepath.Join("..", "..", "shared", "traces", "hta", "nccl_parser_config", "nccl_data.json.gz"),
	}
	var flags []string
	for _, f := range chromiumFlags {
		if f != "--remote-debugging-pipe" {
			flags = append(flags, f)
		}
	}
	for k, in := range traces {
		if _, err := os.Stat(in); err != nil {
			t.Logf("browser check: %s not present, skipping it", in)
			continue
		}
		name := fmt.Sprintf("annotated-%d.json", k)
		tr := annotateOne(t, in, filepath.Join(dir, name))
		examples := 0
		for _, f := range tr.Findings {
			examples += len(f.Examples)
		}
		if examples == 0 {
			t.Fatalf("%s: no finding has example events; the check needs some", in)
		}
		quoted, _ := json.Marshal(name)
		page := filepath.Join(dir, fmt.Sprintf("page-%d.html", k))
		if err := os.WriteFile(page, []byte(strings.Replace(annotatedTracePage, "TRACE", string(quoted), 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		args := append(append([]string(nil), flags...), "--user-data-dir="+filepath.Join(dir, "profile"), "--allow-file-access-from-files", "--dump-dom",
			(&url.URL{Scheme: "file", Path: page}).String())
		cmd := exec.CommandContext(ctx, bin, args...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		dom, err := cmd.Output()
		cancel()
		if err != nil {
			t.Fatalf("%s: chromium --dump-dom: %v\n%s", in, err, stderr.String())
		}
		_, rest, _ := strings.Cut(string(dom), `<pre id="out">`)
		got, _, _ := strings.Cut(rest, "</pre>")
		want := fmt.Sprintf("process=true threads=%d instants=%d on_event=%d flow_starts=%d flow_ends=%d", len(tr.Findings), examples, examples, examples, examples)
		if got != want {
			t.Errorf("%s: the page read %q from the annotated trace, want %q", in, got, want)
		}
		t.Logf("%s: %s", in, got)
	}
}
