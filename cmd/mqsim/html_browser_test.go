//go:build browser

package main

// The page of a run, in a real browser: `make test-browser` (Debian's chromium, driven
// with chromedp). It is behind the browser build tag so that `make test` stays Go-only.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// chromium is the browser the test drives: $CHROMIUM, else Debian's.
func chromium(t *testing.T) string {
	path := os.Getenv("CHROMIUM")
	if path == "" {
		path = "/usr/bin/chromium"
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("no chromium at %s (apt-get install -y chromium, or set CHROMIUM): %v", path, err)
	}
	return path
}

// browse opens a headless chromium for the test.
func browse(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)), chromedp.NoSandbox, chromedp.WindowSize(1400, 1000),
		chromedp.Flag("allow-file-access-from-files", true))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	ctx, cancelT := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(func() { cancelT(); cancelC(); cancelA() })
	return ctx
}

// savePage writes the scenario's page to a temporary file and returns its file:// URL.
func savePage(t *testing.T, scenario string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), scenario+".html")
	if err := os.WriteFile(path, writePage(t, scenario), 0o644); err != nil {
		t.Fatal(err)
	}
	return "file://" + path
}

// position is the header's "step k / n · event i / N".
func position(t *testing.T, ctx context.Context) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#pos")))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// hws are the replicas' "b1 HW LEO" at the current event, from the strips' data.
func hws(t *testing.T, ctx context.Context) string {
	t.Helper()
	js := `[...document.querySelectorAll("#parts .strip")].map(s => s.dataset.broker + " HW " + s.querySelector(".hw").dataset.hw + " LEO " + s.querySelector(".hw").dataset.leo).join(", ")`
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func evalInt(t *testing.T, ctx context.Context, js string) int {
	t.Helper()
	n, err := chromedp.Run(ctx, chromedp.Evaluate[int](js))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func evalString(t *testing.T, ctx context.Context, js string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func press(t *testing.T, ctx context.Context, keys string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.KeyEvent(keys)); err != nil {
		t.Fatal(err)
	}
}

// The page of acks1-leader-crash opens at the lost write's step, steps with the keys,
// jumps by kind and by the verdict's link, shows the replicas' HW at each event and the
// diagram; a screenshot is saved under testdata to look at.
func TestHTMLPageInBrowserAcks1(t *testing.T) {
	ctx := browse(t)
	url := savePage(t, "acks1-leader-crash")
	if err := chromedp.Do(ctx, chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS("#diagram svg"))); err != nil {
		t.Fatal(err)
	}
	svgs := evalInt(t, ctx, `document.querySelectorAll("#diagram svg").length`)
	if got := position(t, ctx); got != "step 48 / 344 · event 26 / 70" {
		t.Errorf("the page opens at %q, want step 48 (the violations begin there), event 26", got)
	}
	if svgs != 1 {
		t.Errorf("%d diagrams shown, want 1", svgs)
	}
	// → four times: b1 acknowledges "lost" at step 51 with HW 1, the followers at LEO 1.
	press(t, ctx, kb.ArrowRight+kb.ArrowRight+kb.ArrowRight+kb.ArrowRight)
	if got := position(t, ctx); got != "step 51 / 344 · event 30 / 70" {
		t.Errorf("after 4 × →: %q, want step 51, event 30", got)
	}
	if got, want := hws(t, ctx), "b1 HW 1 LEO 2, b2 HW 0 LEO 1, b3 HW 0 LEO 1"; got != want {
		t.Errorf("at b1's ack of lost: %s, want %s", got, want)
	}
	text := evalString(t, ctx, `document.getElementById("text").textContent`)
	note := evalString(t, ctx, `document.getElementById("note").textContent`)
	if text == "" || note != "notes/acks.md" {
		t.Errorf("explanation %q with note %q, want some text and notes/acks.md", text, note)
	}
	// ← goes back one.
	press(t, ctx, kb.ArrowLeft)
	if got := position(t, ctx); got != "step 51 / 344 · event 29 / 70" {
		t.Errorf("after ←: %q, want step 51 (b1's fsync), event 29", got)
	}
	// ] jumps to the next fault (the first jump group): b1's crash at step 52.
	press(t, ctx, "]")
	if got := position(t, ctx); got != "step 52 / 344 · event 32 / 70" {
		t.Errorf("after ]: %q, want the crash at step 52, event 32", got)
	}
	// t then ] : the next append, b2's at step 186 after the election.
	press(t, ctx, "t]")
	if got := position(t, ctx); got != "step 186 / 344 · event 47 / 70" {
		t.Errorf("after t ]: %q, want b2's append at step 186, event 47", got)
	}
	if got, want := hws(t, ctx), "b1 HW 1 LEO 2, b2 HW 1 LEO 2, b3 HW 1 LEO 1"; got != want {
		t.Errorf("at b2's append of after: %s, want %s", got, want)
	}
	// The verdict's lost-write link goes back to where it began.
	links := evalInt(t, ctx, `document.querySelectorAll("#verdict a").length`)
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#verdict a[data-violation="1"]`))); err != nil {
		t.Fatal(err)
	}
	if links != 3 {
		t.Errorf("%d verdict links, want 3", links)
	}
	if got := position(t, ctx); got != "step 48 / 344 · event 26 / 70" {
		t.Errorf("after the lost-write link: %q, want step 48, event 26", got)
	}
	press(t, ctx, kb.ArrowRight+kb.ArrowRight+kb.ArrowRight+kb.ArrowRight)
	if err := chromedp.Do(ctx, chromedp.Sleep(200*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("testdata", "html-acks1-leader-crash.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// The other classroom runs: each page loads, opens at its key moment, steps, and shows its
// cluster (partitions or queues) and clients.
func TestHTMLPageInBrowserOthers(t *testing.T) {
	for _, c := range []struct{ scenario, cluster string }{
		{"rebalance-duplicates", "#parts .strip"},
		{"rabbit-quorum-leader-crash", "#queues div"},
	} {
		t.Run(c.scenario, func(t *testing.T) {
			ctx := browse(t)
			if err := chromedp.Do(ctx, chromedp.Navigate(savePage(t, c.scenario)), chromedp.WaitVisible(chromedp.CSS("#diagram svg"))); err != nil {
				t.Fatal(err)
			}
			start := position(t, ctx)
			press(t, ctx, kb.ArrowRight)
			next := position(t, ctx)
			if start == next || !strings.HasPrefix(next, "step ") {
				t.Errorf("→ from %q gave %q", start, next)
			}
			rows := evalInt(t, ctx, fmt.Sprintf(`document.querySelectorAll(%q).length`, c.cluster))
			clients := evalInt(t, ctx, `document.querySelectorAll("#clients div").length`)
			if rows == 0 || clients == 0 {
				t.Errorf("at %q: %d rows of %s, %d client lines; want some of each", next, rows, c.cluster, clients)
			}
			t.Logf("opens at %q; %d cluster rows, %d client lines", start, rows, clients)
		})
	}
}
