// rocketlb live driver: rocketmq-client-go's own push consumer (issue 47, item 2).
//
//	consume NAMESRV TOPIC GROUP INSTANCE STOP_FILE [STRATEGY]
//
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
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/internal/utils"
	"github.com/apache/rocketmq-client-go/v2/primitive"
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
	if len(os.Args) < 6 {
		fail("usage: consume NAMESRV TOPIC GROUP INSTANCE STOP_FILE [STRATEGY]")
	}
	namesrv, topic, group, instance, stop := os.Args[1], os.Args[2], os.Args[3], os.Args[4],
		os.Args[5]
	name := "AVG"
	if len(os.Args) > 6 {
		name = os.Args[6]
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
