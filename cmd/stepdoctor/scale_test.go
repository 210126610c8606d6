//go:build linux

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/stepdoctor/stepdoctor/engine/trace/tracetest"
)

// scaleRanks is how many ranks TestScaleRecipe reduces.
const scaleRanks = 1000

// docBlock returns the body of the fenced block of doc whose info string
// is lang followed by tag ("```sh scale-local").
func docBlock(t *testing.T, doc, lang, tag string) string {
	t.Helper()
	re := regexp.MustCompile("(?s)```" + regexp.QuoteMeta(lang) + " " + regexp.QuoteMeta(tag) + "\n(.*?)```")
	m := re.FindStringSubmatch(doc)
	if m == nil {
		t.Fatalf("docs/scale.md has no ```%s %s block", lang, tag)
	}
	return m[1]
}

// mapCommand is the stepdoctor facts command of a map step with the
// rank's index written as {}.
func mapCommand(t *testing.T, where, line, index string) string {
	t.Helper()
	i := strings.Index(line, "stepdoctor facts ")
	if i < 0 {
		t.Fatalf("%s: no stepdoctor facts command in %q", where, line)
	}
	return strings.ReplaceAll(strings.TrimSpace(line[i:]), index, "{}")
}

// buildStepdoctor builds the binary into dir (the doc's commands run it
// by name from PATH).
func buildStepdoctor(t *testing.T, dir string) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skipf("skipping: no go command to build stepdoctor: %v", err)
	}
	cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "stepdoctor"), ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
}

// TestScaleRecipe runs docs/scale.md's map and reduce steps as the doc
// writes them (sh, seq, xargs -P) over 1,000 synthetic ranks read through
// file:// URLs, checks that the merged report equals analyzing the traces
// directly, that the merge of 1,000 facts files stays under 10 s (of CPU)
// and 1 GB,
// and that the Kubernetes and Slurm map steps run the same command. The
// report at 1,000 ranks must stay readable: the rank table lists the
// outliers and counts the rest.
func TestScaleRecipe(t *testing.T) {
	if testing.Short() {
		t.Skip("skipping: builds stepdoctor and runs it 1,000 times (not with -short)")
	}
	for _, tool := range []string{"sh", "seq", "xargs", "nproc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("skipping: the doc's recipe needs %s: %v", tool, err)
		}
	}
	b, err := os.ReadFile("../../docs/scale.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	local := strings.Split(strings.TrimSpace(docBlock(t, doc, "sh", "scale-local")), "\n")
	if len(local) != 2 {
		t.Fatalf("the scale-local block has %d lines, want the map line and the reduce line", len(local))
	}
	want := mapCommand(t, "scale-local", local[0], "{}")

	// The Kubernetes Job and the Slurm array run the same map command
	// for their index, over the same number of ranks.
	var job struct {
		Spec struct {
			CompletionMode string `yaml:"completionMode"`
			Completions    int    `yaml:"completions"`
			Template       struct {
				Spec struct {
					Containers []struct {
						Command []string `yaml:"command"`
					} `yaml:"containers"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	if err := yaml.Unmarshal([]byte(docBlock(t, doc, "yaml", "scale-kubernetes")), &job); err != nil {
		t.Fatalf("scale-kubernetes: %v", err)
	}
	if job.Spec.CompletionMode != "Indexed" || job.Spec.Completions != scaleRanks || len(job.Spec.Template.Spec.Containers) != 1 || len(job.Spec.Template.Spec.Containers[0].Command) != 3 {
		t.Fatalf("scale-kubernetes: want an Indexed Job of %d completions with one sh -c container, got %+v", scaleRanks, job.Spec)
	}
	if got := mapCommand(t, "scale-kubernetes", job.Spec.Template.Spec.Containers[0].Command[2], "${JOB_COMPLETION_INDEX}"); got != want {
		t.Errorf("the Kubernetes map step runs %q, the local one %q", got, want)
	}
	slurm := strings.Split(strings.TrimSpace(docBlock(t, doc, "sh", "scale-slurm")), "\n")
	if !strings.Contains(doc, fmt.Sprintf("#SBATCH --array=0-%d%%", scaleRanks-1)) {
		t.Errorf("scale-slurm: no array of %d tasks", scaleRanks)
	}
	if got := mapCommand(t, "scale-slurm", slurm[len(slurm)-1], "${SLURM_ARRAY_TASK_ID}"); got != want {
		t.Errorf("the Slurm map step runs %q, the local one %q", got, want)
	}

	tmp := t.TempDir()
	bin := filepath.Join(tmp, "bin")
	buildStepdoctor(t, bin)
	traces, factsDir, work := filepath.Join(tmp, "traces"), filepath.Join(tmp, "facts"), filepath.Join(tmp, "work")
	for _, d := range []string{work, factsDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for r := 0; r < scaleRanks; r++ {
		dir := filepath.Join(traces, fmt.Sprintf("rank%d", r))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("node%d_%d.pt.trace.json", r/8, 1000+r)), tracetest.Rank(r, scaleRanks).JSON(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := append(os.Environ(),
		"PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"),
		fmt.Sprintf("WORLD_SIZE=%d", scaleRanks),
		"TRACES=file://"+filepath.ToSlash(traces),
		"FACTS=file://"+filepath.ToSlash(factsDir))
	sh := func(line string) (*os.ProcessState, time.Duration, string) {
		t.Helper()
		cmd := exec.Command("sh", "-c", line)
		cmd.Dir, cmd.Env = work, env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		start := time.Now()
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v\n%s", line, err, out.String())
		}
		return cmd.ProcessState, time.Since(start), out.String()
	}

	_, mapWall, _ := sh(local[0])
	entries, err := os.ReadDir(factsDir)
	if err != nil || len(entries) != scaleRanks {
		t.Fatalf("the map step wrote %d facts files (%v), want %d", len(entries), err, scaleRanks)
	}
	// The reduce step as the doc writes it, and the same merge to JSON:
	// its wall time and peak memory are the child's.
	sh(local[1])
	st, mergeWall, _ := sh(`stepdoctor analyze -q --format json "$FACTS/" -o merged.json`)
	rss := int64(st.SysUsage().(*syscall.Rusage).Maxrss) << 10 // Linux: KiB
	cpu := st.UserTime() + st.SystemTime()
	t.Logf("map step: %d ranks in %s; merge of %d facts files: %s wall, %s CPU, %.0f MB peak RSS", scaleRanks, mapWall.Round(time.Millisecond), scaleRanks, mergeWall.Round(time.Millisecond), cpu.Round(time.Millisecond), float64(rss)/1e6)
	// Time and memory are measured and logged, not asserted (a loaded
	// machine would make a bound flaky): docs/scale.md quotes them.
	sh(`stepdoctor analyze -q --format json "$TRACES/" -o direct.json`)
	merged, direct := readReport(t, filepath.Join(work, "merged.json")), readReport(t, filepath.Join(work, "direct.json"))
	if !reflect.DeepEqual(merged, direct) {
		t.Errorf("the report merged from facts files differs from analyzing the traces directly")
	}
	if tr, _ := merged["traces"].([]any); len(tr) != scaleRanks {
		t.Fatalf("the merged report holds %d traces, want %d", len(tr), scaleRanks)
	}

	// Readable at 1,000 ranks: a bounded rank table and a job summary.
	sh(`stepdoctor analyze -q "$FACTS/" -o report.md`)
	md, err := os.ReadFile(filepath.Join(work, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	html, err := os.ReadFile(filepath.Join(work, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("report at %d ranks: Markdown %d KB, HTML %d KB", scaleRanks, len(md)>>10, len(html)>>10)
	rows := regexp.MustCompile(`(?m)^\| \d+( ⚠ straggler)? \|`).FindAll(md, -1)
	if len(rows) > 50 {
		t.Errorf("the Markdown rank table has %d rows at %d ranks, want the outliers only (at most 50)", len(rows), scaleRanks)
	}
	last := fmt.Sprintf("| %d ⚠ straggler |", scaleRanks-1)
	if !bytes.Contains(md, []byte(last)) || !bytes.Contains(html, []byte("straggler")) {
		t.Errorf("the 1,000-rank report does not name rank %d as the straggler", scaleRanks-1)
	}
	if !regexp.MustCompile(`\d+ more ranks`).Match(md) {
		t.Errorf("the Markdown rank table does not count the ranks it leaves out")
	}
}

// readReport reads a JSON report without what depends on the paths the
// command was given.
func readReport(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	delete(m, "stepdoctor") // version and command line
	return m
}
