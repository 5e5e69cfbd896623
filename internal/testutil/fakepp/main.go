// Command fakepp is a stand-in post-processor for tests. It takes the
// post-processor's command line (<traces dir> -j N) after its own
// --mode=MODE and --delay=D, and in mode
//
//	ok      writes kernelslist.g from the raw kernel lists (.trace[.xz]
//	        names mapped to .traceg), as the real tool's last step does
//	fail    prints seven numbered lines and exits 3
//	nolist  prints a line and exits 0 without writing kernelslist.g
//	slow    prints "started", waits --delay (default 1h) then acts as ok;
//	        it ignores nothing, so SIGTERM ends it
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
)

func main() {
	mode := flag.String("mode", "ok", "ok, fail, nolist or slow")
	delay := flag.Duration("delay", time.Hour, "wait of the slow mode")
	jobs := flag.Int("j", 1, "parallel kernels (ignored)")
	flag.Parse()
	_ = jobs
	args := flag.Args()
	// The contract puts the directory before -j; flag stops at it.
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "fakepp: usage: fakepp [--mode M] <traces dir> -j N")
		os.Exit(2)
	}
	dir := args[0]
	switch *mode {
	case "fail":
		for i := 1; i <= 7; i++ {
			fmt.Printf("fakepp line %d\n", i)
		}
		os.Exit(3)
	case "nolist":
		fmt.Println("fakepp: done, but wrote nothing")
		return
	case "slow":
		fmt.Println("started")
		time.Sleep(*delay)
	}
	if err := writeList(dir); err != nil {
		fmt.Fprintln(os.Stderr, "fakepp:", err)
		os.Exit(1)
	}
	fmt.Println("fakepp: wrote kernelslist.g")
}

var traceName = regexp.MustCompile(`\.trace(\.xz)?$`)

func writeList(dir string) error {
	lists, _ := filepath.Glob(filepath.Join(dir, "kernelslist_ctx_*"))
	if _, err := os.Stat(filepath.Join(dir, "kernelslist")); err == nil {
		lists = append(lists, filepath.Join(dir, "kernelslist"))
	}
	sort.Strings(lists)
	if len(lists) == 0 {
		return fmt.Errorf("%s: no kernelslist", dir)
	}
	var out strings.Builder
	for _, l := range lists {
		f, err := os.Open(l)
		if err != nil {
			return err
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			out.WriteString(traceName.ReplaceAllString(strings.TrimSpace(sc.Text()), ".traceg") + "\n")
		}
		f.Close()
	}
	tmp := filepath.Join(dir, ".kernelslist.g.tmp")
	if err := os.WriteFile(tmp, []byte(out.String()), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, "kernelslist.g"))
}
