// Command mgotxn runs the two-phase transfer workload through mgo/txn (github.com/globalsign/mgo/txn), the
// reference client-side multi-document transaction runner for MongoDB, for consistency-kit's peer benchmark.
//
// It reads one request per line on standard input and answers each with one JSON line on standard output:
//
//	prepare <accounts> <opening>      drop the database's collections, insert the accounts
//	run <callers> <milliseconds>      transfer between random accounts on <callers> goroutines for that long
//	check                             resume unfinished transactions, sum the balances, count what is left: the
//	                                  transaction documents and the longest txn-queue on an account
//
// Usage: mgotxn <mongodb-uri> <database>
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/globalsign/mgo"
	"github.com/globalsign/mgo/bson"
	"github.com/globalsign/mgo/txn"
)

type account struct {
	ID      string   `bson:"_id"`
	Balance int64    `bson:"balance"`
	Queue   []string `bson:"txn-queue,omitempty"`
}

type runResult struct {
	Operations int64   `json:"operations"`
	Aborted    int64   `json:"aborted"`
	Failed     int64   `json:"failed"`
	FirstError string  `json:"firstError,omitempty"`
	ElapsedNs  int64   `json:"elapsedNanos"`
	LatencyUs  []int64 `json:"latencyMicros"`
}

type checkResult struct {
	Accounts     int64  `json:"accounts"`
	Total        int64  `json:"total"`
	Pending      int64  `json:"pending"`
	Transactions int64  `json:"transactions"`
	MaxQueue     int64  `json:"maxTxnQueue"`
	Error        string `json:"error,omitempty"`
}

type errorResult struct {
	Error string `json:"error"`
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: mgotxn <mongodb-uri> <database>")
		os.Exit(2)
	}
	session, err := mgo.DialWithTimeout(os.Args[1], 10*time.Second)
	if err != nil {
		reply(errorResult{Error: "connect: " + err.Error()})
		os.Exit(1)
	}
	defer session.Close()
	session.SetMode(mgo.Strong, true)
	session.SetPoolLimit(64)
	db := session.DB(os.Args[2])
	accounts := 0
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		fields := strings.Fields(in.Text())
		if len(fields) == 0 {
			continue
		}
		switch fields[0] {
		case "prepare":
			n, _ := strconv.Atoi(fields[1])
			opening, _ := strconv.ParseInt(fields[2], 10, 64)
			if err := prepare(db, n, opening); err != nil {
				reply(errorResult{Error: "prepare: " + err.Error()})
				continue
			}
			accounts = n
			reply(map[string]int{"accounts": n})
		case "run":
			if accounts < 2 {
				reply(errorResult{Error: "run before prepare"})
				continue
			}
			callers, _ := strconv.Atoi(fields[1])
			millis, _ := strconv.Atoi(fields[2])
			reply(run(session, os.Args[2], accounts, callers, time.Duration(millis)*time.Millisecond))
		case "check":
			reply(check(db))
		case "quit":
			return
		default:
			reply(errorResult{Error: "unknown request " + fields[0]})
		}
	}
}

func reply(v interface{}) {
	line, err := json.Marshal(v)
	if err != nil {
		line = []byte(`{"error":"cannot encode the answer"}`)
	}
	os.Stdout.Write(append(line, '\n'))
}

func prepare(db *mgo.Database, n int, opening int64) error {
	// drops only what exists: the embedded server answers an error to a command sent as OP_QUERY (as mgo sends
	// them) by closing the connection
	existing, err := db.CollectionNames()
	if err != nil {
		return err
	}
	for _, c := range existing {
		if err := db.C(c).DropCollection(); err != nil {
			return err
		}
	}
	batch := make([]interface{}, 0, 1000)
	for i := 0; i < n; i++ {
		batch = append(batch, account{ID: "a" + strconv.Itoa(i), Balance: opening})
		if len(batch) == cap(batch) || i == n-1 {
			if err := db.C("accounts").Insert(batch...); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	return nil
}

// run transfers 1 to 5 between two random accounts on each caller until the deadline, asserting the debited
// account's balance covers the amount (mgo/txn aborts the whole transaction otherwise), as consistency-kit's
// transfer does.
func run(root *mgo.Session, database string, accounts, callers int, duration time.Duration) runResult {
	var mu sync.Mutex
	result := runResult{}
	deadline := time.Now().Add(duration)
	start := time.Now()
	var wg sync.WaitGroup
	for c := 0; c < callers; c++ {
		wg.Add(1)
		go func(seed int64) {
			defer wg.Done()
			s := root.Copy()
			defer s.Close()
			runner := txn.NewRunner(s.DB(database).C("txns"))
			random := rand.New(rand.NewSource(seed))
			var latencies []int64
			var ops, aborted, failed int64
			firstError := ""
			for time.Now().Before(deadline) {
				from := random.Intn(accounts)
				to := random.Intn(accounts - 1)
				if to >= from {
					to++
				}
				amount := int64(1 + random.Intn(5))
				transfer := []txn.Op{
					{C: "accounts", Id: "a" + strconv.Itoa(from),
						Assert: bson.M{"balance": bson.M{"$gte": amount}},
						Update: bson.M{"$inc": bson.M{"balance": -amount}}},
					{C: "accounts", Id: "a" + strconv.Itoa(to),
						Update: bson.M{"$inc": bson.M{"balance": amount}}},
				}
				began := time.Now()
				err := runner.Run(transfer, bson.NewObjectId(), nil)
				switch {
				case err == nil:
					ops++
					latencies = append(latencies, time.Since(began).Microseconds())
				case err == txn.ErrAborted:
					aborted++
				default:
					failed++
					if firstError == "" {
						firstError = err.Error()
					}
					s.Refresh()
				}
			}
			mu.Lock()
			result.Operations += ops
			result.Aborted += aborted
			result.Failed += failed
			if result.FirstError == "" {
				result.FirstError = firstError
			}
			result.LatencyUs = append(result.LatencyUs, latencies...)
			mu.Unlock()
		}(time.Now().UnixNano() + int64(c))
	}
	wg.Wait()
	result.ElapsedNs = time.Since(start).Nanoseconds()
	if result.LatencyUs == nil {
		result.LatencyUs = []int64{}
	}
	return result
}

// check finishes every transaction a caller left behind and sums the balances.
func check(db *mgo.Database) checkResult {
	runner := txn.NewRunner(db.C("txns"))
	if err := runner.ResumeAll(); err != nil {
		return checkResult{Error: "resume: " + err.Error()}
	}
	pending, err := db.C("txns").Find(bson.M{"s": bson.M{"$in": []int{1, 2, 3, 4}}}).Count()
	if err != nil {
		return checkResult{Error: "count: " + err.Error()}
	}
	var all []account
	if err := db.C("accounts").Find(nil).All(&all); err != nil {
		return checkResult{Error: "read: " + err.Error()}
	}
	transactions, err := db.C("txns").Count()
	if err != nil {
		return checkResult{Error: "count: " + err.Error()}
	}
	result := checkResult{Accounts: int64(len(all)), Pending: int64(pending), Transactions: int64(transactions)}
	for _, a := range all {
		result.Total += a.Balance
		if int64(len(a.Queue)) > result.MaxQueue {
			result.MaxQueue = int64(len(a.Queue))
		}
	}
	return result
}
