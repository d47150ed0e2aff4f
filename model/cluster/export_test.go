package cluster

// Paranoid makes the invariant observer of c also read every replica view at every
// event, and record where the views it kept differ from those.
func Paranoid(c *Cluster) { c.inv.paranoid = true }

// Divergences lists where the kept views differed from fresh ones (see Paranoid).
func Divergences(c *Cluster) []string { return c.inv.divergences }
