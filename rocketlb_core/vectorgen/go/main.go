// Conformance vectors from rocketmq-client-go's own code (issue 47, item 1): its allocation
// strategies, its producer's queue selectors, the order its producer and consumer give a
// route's queues, and its client id. Usage: rocketlbvectors SEED CASES (JSON lines on stdout).
// Every random choice comes from math/rand seeded with SEED; nothing reads the clock.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"unsafe"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/internal"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
	"github.com/apache/rocketmq-client-go/v2/rlog"
)

// The two unexported route conversions, called as the client calls them (the receiver of the
// first is unused by its body).
//
//go:linkname routeData2PublishInfo github.com/apache/rocketmq-client-go/v2/internal.(*namesrvs).routeData2PublishInfo
func routeData2PublishInfo(s unsafe.Pointer, topic string, data *internal.TopicRouteData) *internal.TopicPublishInfo

//go:linkname routeData2SubscribeInfo github.com/apache/rocketmq-client-go/v2/internal.routeData2SubscribeInfo
func routeData2SubscribeInfo(topic string, data *internal.TopicRouteData) []*primitive.MessageQueue

type rec = map[string]any

var rnd *rand.Rand

func pick[T any](xs []T) T { return xs[rnd.Intn(len(xs))] }

func mqRow(q *primitive.MessageQueue) []any {
	if q == nil {
		return nil
	}
	return []any{q.Topic, q.BrokerName, q.QueueId}
}

func mqRows(qs []*primitive.MessageQueue) any {
	if qs == nil {
		return nil // nil, not empty: the vectors tell them apart
	}
	out := make([][]any, 0, len(qs))
	for _, q := range qs {
		out = append(out, mqRow(q))
	}
	return out
}

var names = []string{"broker-a", "broker-b", "broker-c", "broker-d", "b", "Broker-A",
	"broker-é", "broker-\U0001F600", "broker-\uFF5E", "a@b@c", "", "broker-10", "broker-9"}
var rooms = []string{"hz", "sh", "bj", "HZ", "", "hz-1"}

func brokerName(withRooms bool) string {
	if withRooms && rnd.Intn(10) < 8 {
		switch rnd.Intn(6) {
		case 0:
			return pick(rooms) + "@" // Go's Split keeps the empty tail
		case 1:
			return pick(rooms) + "@x@" + pick(names)
		default:
			return pick(rooms) + "@" + pick(names)
		}
	}
	if rnd.Intn(4) == 0 {
		return "broker-" + strconv.Itoa(rnd.Intn(40))
	}
	return pick(names)
}

func queues(topic string, withRooms bool) []*primitive.MessageQueue {
	n := rnd.Intn(6)
	var out []*primitive.MessageQueue
	for b := 0; b < n; b++ {
		name := brokerName(withRooms)
		k := 1 + rnd.Intn(8)
		if rnd.Intn(8) == 0 {
			k = 16 + rnd.Intn(17)
		}
		for i := 0; i < k; i++ {
			out = append(out, &primitive.MessageQueue{Topic: topic, BrokerName: name, QueueId: i})
		}
	}
	if rnd.Intn(3) == 0 {
		rnd.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	}
	return out
}

var hosts = []string{"10.0.0.1", "10.0.0.12", "192.168.1.5", "127.0.0.1", "10.0.0.2"}

func clientIDs() []string {
	n := rnd.Intn(9)
	if rnd.Intn(10) == 0 {
		n = 10 + rnd.Intn(40)
	}
	out := make([]string, 0, n)
	for i := 0; i < n; i++ {
		var id string
		switch rnd.Intn(5) {
		case 0:
			id = pick(hosts) + "@" + strconv.Itoa(1000+rnd.Intn(90000))
		case 1:
			id = pick(hosts) + "@" + strconv.Itoa(1000+rnd.Intn(90000)) + "#" +
				strconv.FormatInt(rnd.Int63(), 10)
		case 2:
			id = pick(hosts) + "@DEFAULT@" + pick([]string{"u1", "é", "\U0001F600"})
		default:
			id = pick(hosts) + "@" + strconv.Itoa(rnd.Intn(50))
		}
		if rnd.Intn(30) == 0 && len(out) > 0 {
			id = pick(out) // a repeated id: the first one decides its index
		}
		out = append(out, id)
	}
	return out
}

func allocateCase(id string) rec {
	strategies := []string{"averagely", "averagely-circle", "machine-nearby", "machine-room",
		"consistent-hash", "config"}
	s := pick(strategies)
	mqs := queues("TopicTest", s == "machine-room")
	cids := clientIDs()
	cur := ""
	switch r := rnd.Intn(20); {
	case r < 17 && len(cids) > 0:
		cur = pick(cids)
	case r < 19:
		cur = pick(hosts) + "@" + strconv.Itoa(rnd.Intn(50))
	}
	params := rec{}
	var strategy consumer.AllocateStrategy
	switch s {
	case "averagely":
		strategy = consumer.AllocateByAveragely
	case "averagely-circle":
		strategy = consumer.AllocateByAveragelyCircle
	case "machine-nearby":
		strategy = consumer.AllocateByMachineNearby
	case "machine-room":
		idcs := []string{}
		for i := 1 + rnd.Intn(3) - rnd.Intn(2); i > 0; i-- {
			idcs = append(idcs, pick(rooms))
		}
		params["consumeridcs"] = idcs
		strategy = consumer.AllocateByMachineRoom(idcs)
	case "consistent-hash":
		v := pick([]int{-1, 0, 1, 2, 3, 5, 10, 10, 10, 20, 50})
		params["virtual_nodes"] = v
		strategy = consumer.AllocateByConsistentHash(v)
	case "config":
		list := queues("TopicTest", false)
		params["list"] = mqRows(list)
		strategy = consumer.AllocateByConfig(list)
	}
	out := rec{"id": id, "go": "allocate", "strategy": s, "params": params,
		"group": "GID_test", "current": cur, "mq_all": mqRows(mqs), "cid_all": cids}
	if mqs == nil {
		out["mq_all"] = [][]any{}
	}
	got, panicked := call(func() any { return mqRows(strategy("GID_test", cur, mqs, cids)) })
	out["expect"] = got
	if panicked != "" {
		out["expect"] = rec{"panic": panicked}
	}
	return out
}

func call(f func() any) (got any, panicked string) {
	defer func() {
		if r := recover(); r != nil {
			panicked = fmt.Sprint(r)
		}
	}()
	return f(), ""
}

func selectorCase(id string) rec {
	kind := pick([]string{"round-robin", "round-robin", "hash", "manual"})
	var sel producer.QueueSelector
	switch kind {
	case "round-robin":
		sel = producer.NewRoundRobinQueueSelector()
	case "hash":
		sel = producer.NewHashQueueSelector()
	case "manual":
		sel = producer.NewManualQueueSelector()
	}
	topics := []string{"T1", "T2", "T3"}[:1+rnd.Intn(3)]
	current := map[string]int{}
	all := []any{}
	var lists [][]*primitive.MessageQueue
	route := func(t string) int {
		if _, ok := current[t]; !ok || rnd.Intn(15) == 0 {
			for {
				qs := queues(t, false)
				if len(qs) > 0 {
					current[t] = len(lists)
					lists = append(lists, qs)
					all = append(all, mqRows(qs))
					break
				}
			}
		}
		return current[t]
	}
	ops := []rec{}
	expect := []any{}
	for n := 5 + rnd.Intn(40); n > 0; n-- {
		t := pick(topics)
		k := route(t)
		qs := lists[k]
		msg := primitive.NewMessage(t, []byte("x"))
		op := rec{"topic": t, "route": k}
		last := ""
		if kind == "round-robin" && rnd.Intn(3) == 0 {
			last = pick(qs).BrokerName
			if rnd.Intn(6) == 0 {
				last = "gone"
			}
		}
		op["last_broker"] = last
		if kind == "hash" {
			key := pick([]string{"order-", "user-", "键-", "\U0001F600", ""}) +
				strconv.Itoa(rnd.Intn(100000))
			msg.WithShardingKey(key)
			op["key"] = key
		}
		if kind == "manual" {
			q := pick(qs)
			msg.Queue = &primitive.MessageQueue{Topic: q.Topic, BrokerName: q.BrokerName,
				QueueId: q.QueueId + rnd.Intn(2)}
			op["queue"] = mqRow(msg.Queue)
		}
		ops = append(ops, op)
		expect = append(expect, mqRow(sel.Select(msg, qs, last)))
	}
	return rec{"id": id, "go": "selector", "selector": kind, "routes": all, "ops": ops,
		"expect": expect}
}

func routeCase(id string) rec {
	n := rnd.Intn(8)
	switch rnd.Intn(6) {
	case 0:
		n = 8 + rnd.Intn(10)
	case 1:
		n = 13 + rnd.Intn(60)
	}
	data := &internal.TopicRouteData{}
	qds := []any{}
	bds := []any{}
	for i := 0; i < n; i++ {
		name := "broker-" + strconv.Itoa(rnd.Intn(100))
		if rnd.Intn(10) == 0 && i > 0 {
			name = data.QueueDataList[rnd.Intn(i)].BrokerName // a name twice
		}
		qd := &internal.QueueData{BrokerName: name, ReadQueueNums: rnd.Intn(5),
			WriteQueueNums: rnd.Intn(5), Perm: pick([]int{6, 6, 6, 4, 2, 0, 7})}
		data.QueueDataList = append(data.QueueDataList, qd)
		qds = append(qds, []any{qd.BrokerName, qd.ReadQueueNums, qd.WriteQueueNums, qd.Perm})
		if rnd.Intn(8) != 0 {
			addrs := map[int64]string{1: "127.0.0.1:10921"}
			if rnd.Intn(6) != 0 {
				addrs[0] = "127.0.0.1:10911"
			}
			data.BrokerDataList = append(data.BrokerDataList, &internal.BrokerData{
				Cluster: "DefaultCluster", BrokerName: name, BrokerAddresses: addrs})
			ids := []int64{}
			for k := range addrs {
				ids = append(ids, k)
			}
			if len(ids) == 2 {
				ids = []int64{0, 1}
			}
			bds = append(bds, []any{name, ids})
		}
	}
	conf := ""
	if rnd.Intn(12) == 0 {
		conf = "broker-a:" + strconv.Itoa(rnd.Intn(4)) + ";broker-b:" + strconv.Itoa(rnd.Intn(4))
		data.OrderTopicConf = conf
	}
	out := rec{"id": id, "go": "route", "topic": "TopicTest", "queue_datas": qds,
		"broker_datas": bds, "order_topic_conf": conf}
	// subscribe first: the producer's conversion sorts the queue data in place
	out["subscribe"] = mqRows(routeData2SubscribeInfo("TopicTest", data))
	info := routeData2PublishInfo(nil, "TopicTest", data)
	out["publish"] = mqRows(info.MqList)
	out["order_topic"] = info.OrderTopic
	return out
}

var orderCalls int

// publishOrderCase: n brokers b0..b(n-1), one writable queue each, through the producer's
// conversion; the positions in the order it lists them (Go's sort.Slice on positions).
func publishOrderCase(id string) rec {
	n := orderCalls
	if orderCalls >= 150 {
		n = 150 + (orderCalls-150)*40
	}
	orderCalls++
	data := &internal.TopicRouteData{}
	for i := 0; i < n; i++ {
		name := "b" + strconv.Itoa(i)
		data.QueueDataList = append(data.QueueDataList, &internal.QueueData{BrokerName: name,
			ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6})
		data.BrokerDataList = append(data.BrokerDataList, &internal.BrokerData{
			BrokerName: name, BrokerAddresses: map[int64]string{0: "127.0.0.1:10911"}})
	}
	order := []int{}
	for _, q := range routeData2PublishInfo(nil, "TopicTest", data).MqList {
		at, err := strconv.Atoi(q.BrokerName[1:])
		if err != nil {
			panic(err)
		}
		order = append(order, at)
	}
	return rec{"id": id, "go": "publish-order", "n": n, "order": order}
}

func clientIDCase(id string) rec {
	opts := internal.DefaultClientOptions()
	opts.ClientIP = pick(hosts)
	opts.InstanceName = pick([]string{"DEFAULT", "DEFAULT", "orders", "1234#5678", "é"})
	if rnd.Intn(3) == 0 {
		opts.UnitName = pick([]string{"unit-1", "u"})
	}
	ns, err := internal.NewNamesrv(primitive.NewPassthroughResolver([]string{"127.0.0.1:9876"}),
		nil)
	if err != nil {
		panic(err)
	}
	opts.Namesrv = ns
	got := internal.GetOrNewRocketMQClient(opts, nil).ClientID()
	// the process id is this run's: written as <pid> so the same seed gives the same bytes
	pid := strconv.Itoa(os.Getpid())
	if opts.InstanceName == "DEFAULT" {
		got = strings.Replace(got, "@"+pid, "@<pid>", 1)
	}
	return rec{"id": id, "go": "client-id", "client_ip": opts.ClientIP,
		"instance_name": opts.InstanceName, "unit_name": opts.UnitName, "expect": got}
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: rocketlbvectors SEED CASES")
		os.Exit(2)
	}
	seed, err1 := strconv.ParseInt(os.Args[1], 10, 64)
	cases, err2 := strconv.Atoi(os.Args[2])
	if err1 != nil || err2 != nil || cases < 1 {
		fmt.Fprintln(os.Stderr, "SEED and CASES must be whole numbers, CASES at least 1")
		os.Exit(2)
	}
	rlog.SetLogLevel("fatal")
	rnd = rand.New(rand.NewSource(seed))
	version := "unknown"
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			if d.Path == "github.com/apache/rocketmq-client-go/v2" {
				version = d.Version
			}
		}
	}
	source := rec{"module": "github.com/apache/rocketmq-client-go/v2", "version": version,
		"toolchain": runtime.Version(), "seed": seed}
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	makers := []func(string) rec{allocateCase, allocateCase, allocateCase, selectorCase,
		selectorCase, routeCase, clientIDCase, publishOrderCase}
	for i := 0; i < cases; i++ {
		id := fmt.Sprintf("go-client-%s-%05d", version, i)
		r := makers[i%len(makers)](id)
		r["source"] = source
		if err := enc.Encode(r); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
