// rocketlb live driver: rocketmq-client-go's own push consumer and producer (issue 47, item 2).
//
//	driver consume NAMESRV TOPIC GROUP INSTANCE STOP_FILE [STRATEGY]
//	driver produce NAMESRV TOPIC GROUP INSTANCE COUNT INTERVAL_MS GO_FILE
//
// produce: the Go client's default producer (NewRoundRobinQueueSelector, RetryTimes 3) prints
// {"started":CLIENT_ID}, waits until GO_FILE exists, then sends COUNT messages synchronously
// (SendSync), one every INTERVAL_MS, and prints one JSON object per send, as the Java driver
// does: {"seq":0,"sent_ms":...,"status":"SEND_OK","broker":"broker-a","queue":3,"msg_id":"...",
// "cost_ms":2} or {"seq":1,"sent_ms":...,"error":"...","cost_ms":12004}; then {"done":COUNT}.
//
// consume:
// Subscribes TOPIC ("*": every message) in GROUP as a clustering push consumer with instance
// name INSTANCE, allocating with STRATEGY: AVG (AllocateByAveragely, the client's default) or
// CONSISTENT_HASH (AllocateByConsistentHash(10): Java's default of virtual nodes). Consumes
// everything and runs until STOP_FILE exists; then it writes consumed.json (the highest offset
// consumed per queue) and ranges.json (per queue the first and last offset and how many
// distinct ones) in its HOME, shuts down cleanly and exits. Killing it is a crash.
//
// Its log is the client's own (rlog, logrus's text format: "MessageQueue do balance done ...
// rebalanceResultSet=[...]" on every change of its share), written to
// HOME/logs/rocketmqlogs/rocketmq-client-go.log with millisecond timestamps and their zone (an
// application's choice of format; the lines are the client's).
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/internal/utils"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/apache/rocketmq-client-go/v2/rlog"
)

// logger is rlog's Logger on a logrus of our own (its output and timestamp format).
type logger struct{ l *logrus.Logger }

func (g logger) Debug(msg string, f map[string]interface{})   { g.l.WithFields(f).Debug(msg) }
func (g logger) Info(msg string, f map[string]interface{})    { g.l.WithFields(f).Info(msg) }
func (g logger) Warning(msg string, f map[string]interface{}) { g.l.WithFields(f).Warning(msg) }
func (g logger) Error(msg string, f map[string]interface{})   { g.l.WithFields(f).Error(msg) }
func (g logger) Fatal(msg string, f map[string]interface{})   { g.l.WithFields(f).Fatal(msg) }
func (g logger) Level(level string)                           {}
func (g logger) OutputPath(path string) error                 { return nil }

func emit(v map[string]any) {
	b, _ := json.Marshal(v)
	fmt.Println(string(b))
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(1)
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "produce" {
		produce(os.Args[2:])
		return
	}
	if len(os.Args) < 2 || os.Args[1] != "consume" {
		fail("usage: driver consume|produce ...")
	}
	consume(os.Args[2:])
}

// logTo makes rlog write the client's lines to HOME/logs/rocketmqlogs/rocketmq-client-go.log.
func logTo(home string) {
	dir := filepath.Join(home, "logs", "rocketmqlogs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fail("%v", err)
	}
	out, err := os.OpenFile(filepath.Join(dir, "rocketmq-client-go.log"),
		os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		fail("%v", err)
	}
	l := logrus.New()
	l.Out = out
	l.SetLevel(logrus.InfoLevel)
	l.Formatter = &logrus.TextFormatter{DisableColors: true, FullTimestamp: true,
		TimestampFormat: "2006-01-02 15:04:05.000 -0700"}
	rlog.SetLogger(logger{l})
}

func produce(args []string) {
	if len(args) != 7 {
		fail("usage: driver produce NAMESRV TOPIC GROUP INSTANCE COUNT INTERVAL_MS GO_FILE")
	}
	namesrv, topic, group, instance, goFile := args[0], args[1], args[2], args[3], args[6]
	count, err1 := strconv.Atoi(args[4])
	interval, err2 := strconv.Atoi(args[5])
	if err1 != nil || err2 != nil || count < 0 || interval < 0 {
		fail("COUNT and INTERVAL_MS must be whole numbers from 0")
	}
	logTo(os.Getenv("HOME"))
	p, err := rocketmq.NewProducer(
		producer.WithGroupName(group),
		producer.WithNsResolver(primitive.NewPassthroughResolver([]string{namesrv})),
		producer.WithInstanceName(instance),
	)
	if err != nil {
		fail("%v", err)
	}
	if err := p.Start(); err != nil {
		fail("%v", err)
	}
	emit(map[string]any{"started": utils.LocalIP + "@" + instance})
	for {
		if _, err := os.Stat(goFile); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	next := time.Now()
	for seq := 0; seq < count; seq++ {
		if wait := time.Until(next); wait > 0 {
			time.Sleep(wait)
		}
		start := time.Now()
		msg := primitive.NewMessage(topic, []byte(fmt.Sprintf("%s/m%d", instance, seq)))
		msg.WithKeys([]string{fmt.Sprintf("seq-%d", seq)})
		res, err := p.SendSync(context.Background(), msg)
		row := map[string]any{"seq": seq, "sent_ms": start.UnixMilli(),
			"cost_ms": time.Since(start).Milliseconds()}
		if err != nil {
			row["error"] = err.Error()
		} else {
			row["status"] = "SEND_OK"
			if res.Status != primitive.SendOK {
				row["status"] = fmt.Sprintf("STATUS_%d", res.Status)
			}
			row["broker"] = res.MessageQueue.BrokerName
			row["queue"] = res.MessageQueue.QueueId
			row["msg_id"] = res.MsgID
		}
		emit(row)
		next = next.Add(time.Duration(interval) * time.Millisecond)
	}
	emit(map[string]any{"done": count})
	_ = p.Shutdown()
}

func consume(args []string) {
	if len(args) < 5 {
		fail("usage: driver consume NAMESRV TOPIC GROUP INSTANCE STOP_FILE [STRATEGY]")
	}
	namesrv, topic, group, instance, stop := args[0], args[1], args[2], args[3], args[4]
	name := "AVG"
	if len(args) > 5 {
		name = args[5]
	}
	var strategy consumer.AllocateStrategy
	switch name {
	case "AVG":
		strategy = consumer.AllocateByAveragely
	case "CONSISTENT_HASH":
		strategy = consumer.AllocateByConsistentHash(10)
	default:
		fail("unknown strategy %s (AVG or CONSISTENT_HASH)", name)
	}
	home := os.Getenv("HOME")
	logTo(home)

	var mu sync.Mutex
	seen := map[string]map[int64]bool{}
	c, err := rocketmq.NewPushConsumer(
		consumer.WithGroupName(group),
		consumer.WithNsResolver(primitive.NewPassthroughResolver([]string{namesrv})),
		consumer.WithInstance(instance),
		consumer.WithConsumerModel(consumer.Clustering),
		consumer.WithStrategy(strategy),
	)
	if err != nil {
		fail("%v", err)
	}
	err = c.Subscribe(topic, consumer.MessageSelector{}, func(ctx context.Context,
		msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range msgs {
			q := fmt.Sprintf("%s/%d", m.Queue.BrokerName, m.Queue.QueueId)
			if seen[q] == nil {
				seen[q] = map[int64]bool{}
			}
			seen[q][m.QueueOffset] = true
		}
		return consumer.ConsumeSuccess, nil
	})
	if err != nil {
		fail("%v", err)
	}
	started := map[string]any{"started": utils.LocalIP + "@" + instance}
	if err := c.Start(); err != nil {
		started["start_error"] = err.Error()
	}
	emit(started)
	for {
		if _, err := os.Stat(stop); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	mu.Lock()
	highest := map[string]int64{}
	ranges := map[string][3]int64{}
	queues := make([]string, 0, len(seen))
	for q := range seen {
		queues = append(queues, q)
	}
	sort.Strings(queues)
	for _, q := range queues {
		first, last := int64(-1), int64(-1)
		for o := range seen[q] {
			if first < 0 || o < first {
				first = o
			}
			if o > last {
				last = o
			}
		}
		highest[q] = last
		ranges[q] = [3]int64{first, last, int64(len(seen[q]))}
	}
	mu.Unlock()
	for file, v := range map[string]any{"consumed.json": highest, "ranges.json": ranges} {
		b, _ := json.Marshal(v)
		if err := os.WriteFile(filepath.Join(home, file), append(b, '\n'), 0o644); err != nil {
			fail("%v", err)
		}
	}
	_ = c.Shutdown()
	emit(map[string]any{"stopped": true})
}
