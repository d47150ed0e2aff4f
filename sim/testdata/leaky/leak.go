package leaky

import (
	"math/rand"
	"os"
	"sync"
	"time"
)

var mu sync.Mutex

func leak(c chan int) {
	go func() { c <- rand.Int() }()
	_ = time.Now()
	time.Sleep(time.Millisecond)
	select {
	case <-c:
	}
	_ = os.Getenv("HOME")
}
