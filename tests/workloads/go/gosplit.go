// SPDX-License-Identifier: MIT

// gosplit: a Go program profiling itself with runtime/pprof, for
// tests/e2e/test_go.sh: cprof-bpf's shares, stacks and lines are checked
// against Go's own profile of the same run.
//
//	gosplit SECONDS CPUPROFILE [HZ]
//
// main calls hotA then hotB in a loop, hotA with twice hotB's iterations
// (about 2/3 and 1/3 of the CPU); prints "pid PID" once its profile has
// started and "done" when it is written.  HZ: runtime/pprof's rate (100 by
// default), set before the profile starts (Go then says on stderr that it
// cannot set it again: the rate set first holds).
package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"time"
)

var sink uint64

//go:noinline
func hotA(n int) {
	for i := 0; i < n; i++ {
		sink = sink*31 + uint64(i)
	}
}

//go:noinline
func hotB(n int) {
	for i := 0; i < n; i++ {
		sink = sink*17 + uint64(i)
	}
}

func main() {
	if len(os.Args) != 3 && len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: gosplit SECONDS CPUPROFILE [HZ]")
		os.Exit(2)
	}
	if len(os.Args) == 4 {
		hz, err := strconv.Atoi(os.Args[3])
		if err != nil || hz <= 0 {
			fmt.Fprintln(os.Stderr, "gosplit: HZ:", os.Args[3])
			os.Exit(2)
		}
		runtime.SetCPUProfileRate(hz)
	}
	secs, err := strconv.ParseFloat(os.Args[1], 64)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gosplit:", err)
		os.Exit(2)
	}
	f, err := os.Create(os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, "gosplit:", err)
		os.Exit(1)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintln(os.Stderr, "gosplit:", err)
		os.Exit(1)
	}
	fmt.Println("pid", os.Getpid())
	end := time.Now().Add(time.Duration(secs * float64(time.Second)))
	for time.Now().Before(end) {
		hotA(400000)
		hotB(200000)
	}
	pprof.StopCPUProfile()
	f.Close()
	fmt.Println("done")
}
