//go:build !unix

package scenarios

import "time"

// processCPU is not measured here: the CPU ratios read 0/0.
func processCPU() time.Duration { return 0 }
