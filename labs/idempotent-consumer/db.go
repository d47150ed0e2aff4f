package lab

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"mqsim/sim"
)

// The database: one node with one table (key -> value) and a ledger of credits, both
// changed only by transactions. A transaction is one Exec from an application: the
// database runs the learner's Handler on it, one at a time, and on success appends the
// transaction's writes to its log file and answers once an fsync made them durable. A
// crash loses the table in memory and the Handler; a restart reads the log back, up to
// the last complete entry (a torn tail is cut).

// LogFile is the database's log on its disk.
const LogFile = "db.log"

// Exec asks the database to run the Handler on one payment, as one transaction. Req
// numbers the request at its sender (a retry keeps its number).
type Exec struct {
	Req     int64
	Payment Payment
}

// ExecResult is the database's answer: committed and durable (Err empty), or aborted
// because the Handler returned an error (Err says which).
type ExecResult struct {
	Req int64
	Err string
}

// Credit is one credit of the ledger.
type Credit struct {
	PaymentID string `json:"id"`
	Account   string `json:"account"`
	Amount    int64  `json:"amount"`
	// At is when the transaction that wrote it committed (virtual nanoseconds).
	At int64 `json:"at"`
}

// write is one Upsert of a transaction.
type write struct {
	Key   string `json:"k"`
	Value string `json:"v"`
}

// entry is one committed transaction, one line of the log: the payment it ran for and
// when, and what it wrote.
type entry struct {
	Payment string   `json:"p"`
	At      int64    `json:"at"`
	Writes  []write  `json:"w,omitempty"`
	Credits []Credit `json:"c,omitempty"`
}

// Ran is one committed transaction: the payment the Handler ran for, and when.
type Ran struct {
	Payment string
	At      int64
}

// Log is what a database's log holds: the credits of the committed transactions, the
// payment each ran for, the table they wrote, and the length of the complete entries
// (what follows is a torn tail).
type Log struct {
	Credits []Credit
	Ran     []Ran
	Table   map[string]string
	Good    int64
}

// DB is the database node.
type DB struct {
	handler Handler
	table   map[string]string
	ledger  []Credit
	size    int64     // bytes of the log written so far
	waiting []waiting // committed transactions whose answers wait for their fsync
}

// waiting is an answer that waits until the log is durable up to end.
type waiting struct {
	to  sim.NodeID
	req int64
	end int64
}

// NewDB is a database that runs h for every Exec.
func NewDB(h Handler) *DB { return &DB{handler: h, table: map[string]string{}} }

// Ledger is the credits of the committed transactions, in commit order.
func (d *DB) Ledger() []Credit { return slices.Clone(d.ledger) }

// Get reads the table, for views and tests.
func (d *DB) Get(key string) (string, bool) {
	v, ok := d.table[key]
	return v, ok
}

// ReadLog reads a database's log, up to its last complete entry.
func ReadLog(data []byte) Log {
	l := Log{Table: map[string]string{}}
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		var e entry
		if json.Unmarshal(data[:i], &e) != nil {
			break
		}
		for _, w := range e.Writes {
			l.Table[w.Key] = w.Value
		}
		l.Credits = append(l.Credits, e.Credits...)
		l.Ran = append(l.Ran, Ran{Payment: e.Payment, At: e.At})
		l.Good += int64(i + 1)
		data = data[i+1:]
	}
	return l
}

func (d *DB) Start(env *sim.Env) {
	disk := env.Disk()
	data := disk.ReadAll(LogFile)
	l := ReadLog(data)
	if l.Good < int64(len(data)) {
		disk.Truncate(LogFile, l.Good)
	}
	d.ledger, d.table, d.size = l.Credits, l.Table, l.Good
	sim.Record(env, Recovered{Credits: len(l.Credits), Keys: len(l.Table), Cut: int64(len(data)) - l.Good})
}

func (d *DB) Recv(env *sim.Env, from sim.NodeID, msg sim.Message) {
	switch m := msg.(type) {
	case Exec:
		d.exec(env, from, m)
	case sim.FsyncDone:
		if m.File == LogFile {
			d.durable(env, m.Size)
		}
	}
}

func (d *DB) Timer(*sim.Env, sim.TimerTag) {}

// exec runs one transaction.
func (d *DB) exec(env *sim.Env, from sim.NodeID, m Exec) {
	tx := &txn{db: d, at: int64(env.Now())}
	if err := d.run(tx, m.Payment); err != nil {
		sim.Record(env, Aborted{From: env.NameOf(from), Payment: m.Payment.ID, Why: err.Error()})
		env.Send(from, ExecResult{Req: m.Req, Err: err.Error()})
		return
	}
	line, err := json.Marshal(entry{Payment: m.Payment.ID, At: tx.at, Writes: tx.writes, Credits: tx.credits})
	if err != nil { // strings and numbers only: it does not happen, and would abort
		env.Send(from, ExecResult{Req: m.Req, Err: err.Error()})
		return
	}
	line = append(line, '\n')
	d.size = env.Disk().Append(LogFile, line) + int64(len(line))
	for _, w := range tx.writes {
		d.table[w.Key] = w.Value
	}
	d.ledger = append(d.ledger, tx.credits...)
	d.waiting = append(d.waiting, waiting{to: from, req: m.Req, end: d.size})
	sim.Record(env, Committed{From: env.NameOf(from), Payment: m.Payment.ID, Credits: len(tx.credits), Writes: len(tx.writes)})
	env.Fsync(LogFile)
}

// run calls the Handler; a panic in it aborts the transaction like an error.
func (d *DB) run(tx *txn, p Payment) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("your Process panicked: %v", r)
		}
	}()
	return d.handler.Process(tx, p)
}

// durable answers the transactions the log now holds on disk.
func (d *DB) durable(env *sim.Env, size int64) {
	n := 0
	for n < len(d.waiting) && d.waiting[n].end <= size {
		w := d.waiting[n]
		env.Send(w.to, ExecResult{Req: w.req})
		n++
	}
	d.waiting = d.waiting[n:]
	if n > 0 {
		sim.Record(env, Durable{Size: size, Answered: n})
	}
}

// txn is the Tx the Handler gets: its reads see the table and its own writes; its
// writes are kept apart until the commit.
type txn struct {
	db      *DB
	at      int64
	writes  []write
	credits []Credit
}

func (t *txn) Get(key string) (string, bool) {
	for i := len(t.writes) - 1; i >= 0; i-- {
		if t.writes[i].Key == key {
			return t.writes[i].Value, true
		}
	}
	return t.db.Get(key)
}

func (t *txn) Upsert(key, value string) { t.writes = append(t.writes, write{Key: key, Value: value}) }

func (t *txn) Credit(account string, amount int64, paymentID string) {
	t.credits = append(t.credits, Credit{PaymentID: paymentID, Account: account, Amount: amount, At: t.at})
}
