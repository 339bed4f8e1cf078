package rules

import (
	_ "embed"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"
	"github.com/kvplan/kvplan/planfile"
)

// BaseEnv fills the parts of an Env that the plan file states outright: the
// model's name, dtype and tp, the workload, the link as written, the router,
// the transport (through NewTransport), the runtime (through the driver
// table), the SLO, each pool's settings and memory limit, and whether the
// plan is disaggregated and on one GPU. The planner fills the rest: KV,
// link figures of catalog links, disagg times, routing, predictions, and
// each pool's slots and host memory.
func BaseEnv(p *planfile.Plan) Env {
	var e Env
	e.Model = ModelEnv{Name: p.Model.Name, KVDtype: p.Model.KVDtype, TP: p.Model.TP}
	if e.Model.Name == "" {
		e.Model.Name = p.Model.Config
	}
	w := p.Workload
	e.Workload = WorkloadEnv{
		InputTokens: w.InputTokens, OutputTokens: w.OutputTokens, Concurrency: w.Concurrency,
		RequestRate: w.RequestRate, Prefixes: w.Prefixes, PrefixTokens: w.PrefixTokens, Repeats: w.Repeats,
	}
	e.Link = LinkEnv{Name: p.Link.Name, ThroughputBytesPerS: p.Link.ThroughputBytesPerS, LatencyMS: p.Link.LatencyMS}
	e.Router = RouterEnv{Mode: p.Router.Mode, KVEvents: p.Router.KVEventsEnabled(), BlockSize: p.Router.BlockSize, RequestPath: p.Router.RequestPath}
	e.Transport = NewTransport(p.Transport.UCXTLS)
	e.Runtime = NewRuntime(p.Runtime.Engine, p.Runtime.CUDA, p.Runtime.Driver)
	e.SLO = SLOEnv{TTFTMS: p.SLO.TTFTMS, ITLMS: p.SLO.ITLMS}
	e.Disagg.Disaggregated = p.Disaggregated()
	e.Routing.WorkingSetTokens = w.Prefixes * w.PrefixTokens
	for _, name := range p.PoolNames() {
		pl := p.Pools[name]
		pe := PoolEnv{
			Name: name, Role: pl.Role, Workers: pl.Workers, GPU: pl.GPU,
			GPUMemoryUtilization: pl.GPUMemoryUtilization, MaxModelLen: pl.MaxModelLen,
			EnforceEager: pl.EnforceEager, KVBufferDevice: pl.KVBufferDevice, SharesGPUWith: pl.SharesGPUWith,
			StagesKVInHost: pl.KVBufferDevice == planfile.BufferCPU && (pl.Role == planfile.RolePrefill || pl.Role == planfile.RoleDecode),
			HostLimitBytes: int(pl.MemoryLimitBytes), TP: p.PoolTP(pl),
			DataParallelSize: max(1, pl.DataParallelSize), ExpertParallelSize: max(1, pl.ExpertParallelSize), PipelineParallelSize: max(1, pl.PipelineParallelSize),
			SpeculativeTokens: pl.SpeculativeTokens, AcceptanceLength: pl.AcceptanceLength, SpeculativeModel: pl.SpeculativeModel, RedundantExperts: pl.RedundantExperts,
			EPLB: pl.EPLB || pl.RedundantExperts > 0, TwoBatchOverlap: pl.TwoBatchOverlap,
			GPUsPerWorker: p.PoolGPUsPerWorker(pl),
		}
		if o, ok := p.Pools[pl.SharesGPUWith]; ok && isPD(pl.Role, o.Role) {
			e.Disagg.SameGPU = true
		}
		e.Pools = append(e.Pools, pe)
	}
	return e
}

func isPD(a, b string) bool {
	return (a == planfile.RolePrefill && b == planfile.RoleDecode) || (a == planfile.RoleDecode && b == planfile.RolePrefill)
}

// UCX transports grouped by what they can do, built at first use (not in
// every command's init). Source: UCX documentation (UCX_TLS), and FACTS §3
// "Transport settings seen in the field".
var transports = sync.OnceValue(func() (t struct{ gpu, rdma, am map[string]bool }) {
	// transports that move GPU memory directly between processes or nodes
	t.gpu = set("cuda_ipc", "gdr_copy", "rc", "rc_v", "rc_x", "rc_mlx5", "ud", "ud_v", "ud_x", "ud_mlx5", "dc", "dc_x", "dc_mlx5", "ib", "rocm_ipc", "all")
	t.rdma = set("rc", "rc_v", "rc_x", "rc_mlx5", "ud", "ud_v", "ud_x", "ud_mlx5", "dc", "dc_x", "dc_mlx5", "ib", "all")
	// transports that carry active messages (UCX needs one to start)
	t.am = set("tcp", "self", "sm", "shm", "posix", "sysv", "mm", "rc", "rc_v", "rc_x", "rc_mlx5", "ud", "ud_v", "ud_x", "ud_mlx5", "dc", "dc_x", "dc_mlx5", "ib", "all")
	return t
})

func set(xs ...string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// NewTransport derives the transport figures from a UCX_TLS list. An entry
// starting with "^" (UCX's exclusion syntax) is ignored for the derived
// booleans. An empty list is UCX's default, which allows everything.
func NewTransport(ucxTLS []string) TransportEnv {
	t := TransportEnv{UCXTLS: append([]string{}, ucxTLS...)}
	if len(ucxTLS) == 0 {
		t.HasRDMA = true
		return t
	}
	known := transports()
	var tcp, gpu, am, ipc bool
	for _, x := range ucxTLS {
		x = strings.ToLower(strings.TrimSpace(x))
		if strings.HasPrefix(x, "^") {
			continue
		}
		tcp = tcp || x == "tcp"
		gpu = gpu || known.gpu[x]
		am = am || known.am[x]
		ipc = ipc || x == "cuda_ipc"
		t.HasRDMA = t.HasRDMA || known.rdma[x]
	}
	t.TCPOnly = tcp && !gpu
	t.CUDAIPCOnly = ipc && !am
	return t
}

//go:embed data/cuda_drivers.toml
var driverTableTOML string

// DriverCUDA is one row of the driver table: a driver branch and the highest
// CUDA version it supports.
type DriverCUDA struct {
	Branch  int    `toml:"branch"`
	MaxCUDA string `toml:"max_cuda"`
	Source  string `toml:"source"`
}

// driverTable is built on first use, not at start-up: most commands never
// read it. It comes from default_gen.go (written by go generate ./rules), so
// a check does not decode TOML for it; TestDriverTableGenerated keeps that
// equal to data/cuda_drivers.toml.
var driverTable = sync.OnceValue(driverTableParsed)

// parseDriverTable decodes data/cuda_drivers.toml, sorted by branch.
func parseDriverTable(text string) ([]DriverCUDA, error) {
	var doc struct {
		Driver []DriverCUDA `toml:"driver"`
	}
	if _, err := toml.Decode(text, &doc); err != nil {
		return nil, err
	}
	sort.Slice(doc.Driver, func(i, j int) bool { return doc.Driver[i].Branch < doc.Driver[j].Branch })
	return doc.Driver, nil
}

// DriverTable returns the embedded driver → highest CUDA table, by branch.
func DriverTable() []DriverCUDA { return append([]DriverCUDA(nil), driverTable()...) }

// DriverMaxCUDA returns the highest CUDA version ("12.8") a driver version
// ("570.133") supports, or "" when the driver is older than the table or
// not understood.
func DriverMaxCUDA(driver string) string {
	branch, err := strconv.Atoi(strings.SplitN(strings.TrimSpace(driver), ".", 2)[0])
	if err != nil {
		return ""
	}
	best := ""
	for _, d := range driverTable() {
		if d.Branch <= branch {
			best = d.MaxCUDA
		}
	}
	return best
}

// parseCUDA turns "12.9" into (12, 1209); ("", 0, 0) on anything else.
func parseCUDA(v string) (major, num int) {
	a, b, ok := strings.Cut(strings.TrimSpace(v), ".")
	if !ok {
		return 0, 0
	}
	ma, err1 := strconv.Atoi(a)
	mi, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil || ma <= 0 || mi < 0 || mi > 99 {
		return 0, 0
	}
	return ma, ma*100 + mi
}

// NewRuntime fills the runtime figures from the engine, the CUDA build
// ("12.9") and the driver version ("570.133").
func NewRuntime(engine, cudaBuild, driver string) RuntimeEnv {
	r := RuntimeEnv{Engine: engine, CUDABuild: cudaBuild, Driver: driver, DriverMaxCUDA: DriverMaxCUDA(driver)}
	r.CUDABuildMajor, r.CUDABuildNum = parseCUDA(cudaBuild)
	r.DriverMaxCUDAMajor, r.DriverMaxCUDANum = parseCUDA(r.DriverMaxCUDA)
	return r
}

// String of a DriverCUDA row, for `rules env` and docs.
func (d DriverCUDA) String() string {
	return fmt.Sprintf("%d → CUDA %s (%s)", d.Branch, d.MaxCUDA, d.Source)
}
