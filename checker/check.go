package checker

import (
	"fmt"
	"slices"

	"mqsim/model/history"
)

// Options configures Check.
type Options struct {
	Log LogOptions
	// Promise is what the system promises each consumer group; the zero
	// value promises nothing, so delivery is only counted.
	Promise Promise
	// Pipelines are the consume-transform-produce applications the system
	// promises exactly-once to: each input value's record appears once in the
	// output (missing-output, duplicate-output). None: nothing is checked.
	Pipelines []Pipeline
	// Linearizability, when set, also runs CheckLinearizable.
	Linearizability *LinearizabilityOptions
	// Liveness, when set, also runs CheckLiveness.
	Liveness *LivenessOptions
	// Share configures CheckShare, which runs whenever the history has a share group;
	// nil judges by Kafka's defaults (DefaultShareOptions) and notes it.
	Share *ShareOptions
}

// Check runs the queue and delivery checkers, the share checker when h has a share
// group (and the linearizability and liveness checkers when asked) over h and merges
// their reports. The analysis they share is built once.
func Check(h history.History, opts Options) (Report, error) {
	a, err := analyze(h)
	if err != nil {
		return Report{}, err
	}
	reports := []Report{a.log(opts.Log), a.delivery(opts.Promise, opts.Pipelines)}
	if slices.Contains(a.shareGroup, true) {
		share := DefaultShareOptions()
		if opts.Share != nil {
			share = *opts.Share
		}
		r := a.share(share)
		if opts.Share == nil {
			r.Notes = append(r.Notes, Note{Checker: ShareChecker, Text: fmt.Sprintf(
				"share groups judged by Kafka's defaults (delivery count limit %d, share.auto.offset.reset=latest): the run's settings were not given", share.DeliveryCountLimit)})
		}
		reports = append(reports, r)
	}
	if opts.Liveness != nil {
		r, err := a.liveness(*opts.Liveness)
		if err != nil {
			return Report{}, err
		}
		reports = append(reports, r)
	}
	if opts.Linearizability != nil {
		r, err := checkLinearizable(h, *opts.Linearizability) // analyze validated h
		if err != nil {
			return Report{}, err
		}
		reports = append(reports, r)
	}
	return Merge(reports...), nil
}
