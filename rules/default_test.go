package rules

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cleanEnv is a hand-built Env for a healthy disaggregated deployment of
// Qwen3-0.6B over a fast link: no default rule fires on it.
func cleanEnv() Env {
	return Env{
		Model:     ModelEnv{Name: "qwen3-0.6b", KVDtype: "bf16", TP: 1, KVBytesPerElem: 2},
		Workload:  WorkloadEnv{InputTokens: 1524, OutputTokens: 128, Concurrency: 8, Prefixes: 6, PrefixTokens: 1500, Repeats: 6},
		KV:        KVEnv{BytesPerToken: 114688, BytesPerRequest: 189464576, BytesTransfer: 174784512},
		Link:      LinkEnv{Name: "ib-ndr", ThroughputBytesPerS: 42.6e9, LatencyMS: 0.01},
		Router:    RouterEnv{Mode: "kv", KVEvents: true, BlockSize: 16},
		Transport: TransportEnv{UCXTLS: []string{"rc", "cuda_copy", "tcp", "self"}, HasRDMA: true},
		Runtime:   NewRuntime("vllm", "12.8", "570.133"),
		SLO:       SLOEnv{TTFTMS: 500, ITLMS: 50},
		Disagg: DisaggEnv{Disaggregated: true, ConcurrentTransfers: 8, TransferMS: 4.1, TransferMSShared: 32.8,
			PrefillMS: 44, TTFTAggMS: 120, TTFTDisaggMS: 90},
		Routing: RoutingEnv{WorkingSetTokens: 9000, HolderPool: "prefill", HolderWorkers: 2, SlotsPerWorkerTokens: 14816,
			SlotsPoolTokens: 29632, CapacityTokens: 29632, CapacityAggTokens: 59264},
		Predicted: PredictedEnv{TTFTMS: 90, ITLMS: 12, HitRate: 0.8},
		Pools: []PoolEnv{
			{Name: "decode", Role: "decode", Workers: 2, GPU: "rtx4090", GPUMemoryUtilization: 0.9, MaxModelLen: 4096,
				KVBufferDevice: "gpu", ConcurrencyPerWorker: 4, KVSlotsTokens: 120000, MaxModelLenFits: true, HostRequiredBytes: 2 << 30,
				TP: 1, ModelFits: true, WeightsBytes: 1192099840, OverheadBytes: 567880811, RequestedBytes: 23181498777,
				// 4 requests × ceil(1,652 / 16) = 104 blocks × 16 tokens; 7,500 blocks / 104 = 72 fit.
				RequestsInFlight: 8, KVTokensInFlight: 6656, MaxRequestsThatFit: 72, RequestTokens: 1652, PromptFits: true},
			{Name: "prefill", Role: "prefill", Workers: 2, GPU: "rtx4090", GPUMemoryUtilization: 0.9, MaxModelLen: 4096,
				KVBufferDevice: "gpu", ConcurrencyPerWorker: 4, KVSlotsTokens: 14816, MaxModelLenFits: true,
				HostRequiredBytes: 2 << 30, HostLimitBytes: 8 << 30,
				TP: 1, ModelFits: true, WeightsBytes: 1192099840, OverheadBytes: 567880811, RequestedBytes: 23181498777,
				// 3 prefixes per worker under the KV router share their 93 full blocks:
				// (4 × (104 − 93) + 3 × 93) × 16 = 5,168 tokens.
				RequestsInFlight: 8, KVTokensInFlight: 5168, MaxRequestsThatFit: 58, RequestTokens: 1525, PromptFits: true,
				// 2 workers × 1,524 tokens / 31 ms = 98,322.6 tokens/s of prefill; 20 req/s need 30,480.
				RequestRate: 20, UncachedInputTokens: 1524, PrefillMS: 31, PrefillDemandPerS: 30480, PrefillCapacityPerS: 98322.6, PrefillWorkersNeeded: 1},
		},
	}
}

func poolNamed(e *Env, name string) *PoolEnv {
	for i := range e.Pools {
		if e.Pools[i].Name == name {
			return &e.Pools[i]
		}
	}
	panic("no pool " + name)
}

// TestDefaultRules gives every default rule an Env that fires it and one
// that does not (a near miss, not just the clean Env).
func TestDefaultRules(t *testing.T) {
	set, err := Load(Options{})
	if err != nil {
		t.Fatal(err)
	}
	type mut func(e *Env)
	cases := []struct {
		rule     string
		pool     string   // per_pool rules: the pool that fires
		severity Severity // expected severity when it fires
		fire     mut
		miss     mut
		message  string // substring of the message when it fires
	}{
		{"kv-router-without-events", "", Deny,
			func(e *Env) { e.Router.KVEvents = false },
			func(e *Env) { e.Router.KVEvents = false; e.Router.Mode = "round-robin" },
			"router.mode is kv but the workers publish no KV events"},
		{"disagg-transfer-exceeds-prefill", "", Warn,
			func(e *Env) { e.Disagg.TransferMSShared = 44 },
			func(e *Env) { e.Disagg.TransferMSShared = 43.9 },
			"takes 44.00 ms with 8 transfers sharing it, against the 44.00 ms of prefill"},
		// At a load the comparison decides, not one request's prefill: the
		// split frees 255 × (30 − 22) = 2,040 ms of decode per request, less
		// than 2,100 ms of transfer; the near miss frees more than it costs,
		// although one transfer (44 ms) exceeds one prefill (44 ms).
		{"disagg-transfer-exceeds-prefill", "", Warn,
			func(e *Env) {
				e.Workload.OutputTokens = 256
				d := &e.Disagg
				d.AtLoadComputed, d.RequestsPerSAtLoad, d.AggCarriesAtLoad, d.DisaggCarriesAtLoad = true, 20, true, true
				d.ITLAggAtLoadMS, d.ITLDisaggAtLoadMS, d.DecodeStallFreedAtLoad, d.TransferAtLoadMS = 30, 22, 2040, 2100
				d.TransferExceedsGainLoad = true
			},
			func(e *Env) {
				d := &e.Disagg
				d.TransferMSShared = 44
				d.AtLoadComputed, d.RequestsPerSAtLoad, d.AggCarriesAtLoad, d.DisaggCarriesAtLoad = true, 20, true, true
				d.ITLAggAtLoadMS, d.ITLDisaggAtLoadMS, d.DecodeStallFreedAtLoad, d.TransferAtLoadMS = 30, 22, 2040, 9
			},
			"at workload.request_rate = 20/s moving the KV costs 2100.0 ms a request, at least the 2040.0 ms of decode the split frees per request (mean ITL 30.00 ms aggregated on the same GPUs vs 22.00 ms split, over 256 output tokens); one request alone:"},
		{"disagg-transfer-exceeds-prefill", "", Deny, // the SLO breaks: deny_when
			func(e *Env) { e.Disagg.TransferMSShared = 3308; e.Disagg.TTFTDisaggMS = 3400 },
			func(e *Env) { e.Disagg.Disaggregated = false; e.Disagg.TransferMSShared = 3308 },
			"(SLO 500.0 ms)"},
		{"disagg-on-one-gpu", "", Warn,
			func(e *Env) { e.Disagg.SameGPU = true },
			func(e *Env) { e.Disagg.SameGPU = false },
			"share one GPU"},
		{"host-oom-staged-kv", "prefill", Deny,
			func(e *Env) {
				p := poolNamed(e, "prefill")
				p.KVBufferDevice, p.StagesKVInHost, p.HostLimitBytes, p.HostRequiredBytes = "cpu", true, 3584<<20, 4800<<20
				p.HostStagedBytes = 1984 << 20 // 4800 MiB − 2,560 MiB baseline − 256 MiB margin
			},
			func(e *Env) {
				p := poolNamed(e, "prefill")
				p.KVBufferDevice, p.StagesKVInHost, p.HostLimitBytes, p.HostRequiredBytes = "cpu", true, 3584<<20, 3584<<20
			},
			"stage 1.9 GiB; with the engine baseline and margin a worker needs 4.7 GiB, over its memory_limit of 3.5 GiB"},
		{"ucx-gpu-buffer-over-tcp", "decode", Deny,
			func(e *Env) {
				e.Transport = NewTransport([]string{"tcp", "self"})
				poolNamed(e, "prefill").KVBufferDevice = "cpu"
			},
			func(e *Env) {
				e.Transport = NewTransport([]string{"tcp", "self"})
				poolNamed(e, "prefill").KVBufferDevice = "cpu"
				poolNamed(e, "decode").KVBufferDevice = "cpu"
			},
			"UCX_TLS=tcp,self"},
		{"ucx-ipc-only", "", Deny,
			func(e *Env) { e.Transport = NewTransport([]string{"cuda_ipc"}) },
			func(e *Env) { e.Transport = NewTransport([]string{"cuda_ipc", "tcp"}) },
			"no active messages transport"},
		{"cuda-build-vs-driver", "", Deny,
			func(e *Env) { e.Runtime = NewRuntime("vllm", "13.0", "570.133") },
			func(e *Env) { e.Runtime = NewRuntime("vllm", "13.0", "580.65") },
			"built for CUDA 13.0 but driver 570.133 supports CUDA 12.8"},
		{"cuda-minor-version-compat", "", Info,
			func(e *Env) { e.Runtime = NewRuntime("vllm", "12.9", "570.133") },
			func(e *Env) { e.Runtime = NewRuntime("vllm", "12.9", "575.51") },
			"minor-version compatibility"},
		{"working-set-exceeds-slots", "", Warn,
			func(e *Env) {
				e.Router.Mode = "round-robin"
				e.Workload.Prefixes = 12
				e.Routing.WorkingSetTokens = 18000
			},
			func(e *Env) { e.Router.Mode = "kv"; e.Routing.WorkingSetTokens = 18000 },
			"(12 prefixes"},
		{"kv-routing-pays-off", "", Info,
			func(e *Env) { e.Router.Mode = "random"; e.Routing.WorkingSetTokens = 18000 },
			func(e *Env) { e.Router.Mode = "random"; e.Routing.WorkingSetTokens = 30000 },
			"fits the 2 workers' 29,632 tokens of pool prefill"},
		{"prefix-capacity-shrinks-with-disagg", "", Warn,
			func(e *Env) { e.Routing.WorkingSetTokens = 36000 },
			func(e *Env) { e.Routing.WorkingSetTokens = 29632 },
			"its 29,632 tokens of prefix capacity"},
		{"ttft-slo", "", Deny,
			func(e *Env) { e.Predicted.TTFTMS = 501 },
			func(e *Env) { e.Predicted.TTFTMS = 500 },
			"predicted TTFT 501.0 ms at concurrency 8 exceeds the SLO of 500.0 ms"},
		{"itl-slo", "", Warn,
			func(e *Env) { e.Predicted.ITLMS = 60 },
			func(e *Env) { e.SLO.ITLMS = 0; e.Predicted.ITLMS = 60 },
			"60.00 ms"},
		{"max-model-len-does-not-fit", "prefill", Deny,
			func(e *Env) { p := poolNamed(e, "prefill"); p.MaxModelLen, p.MaxModelLenFits = 32768, false },
			func(e *Env) {
				// Figures the planner did not determine (no slots, no weights) fire nothing.
				p := poolNamed(e, "prefill")
				p.MaxModelLen, p.KVSlotsTokens, p.WeightsBytes, p.MaxModelLenFits = 32768, 0, 0, false
			},
			"max_model_len = 32,768 tokens needs more KV than the 14,816 tokens of slots of one worker"},
		{"max-model-len-does-not-fit", "prefill", Deny, // no slots because the weights do not fit: say the pool cannot start
			func(e *Env) {
				p := poolNamed(e, "prefill")
				p.ModelFits, p.KVSlotsTokens, p.MaxModelLenFits = false, 0, false
			},
			func(e *Env) { p := poolNamed(e, "prefill"); p.MaxModelLen, p.MaxModelLenFits = 4096, true },
			"pool prefill cannot start: its weights and overheads leave no memory for a KV cache"},
		// DeepSeek-V3 on H100 at tp 8: 671,026,419,200 fp8 weights / 8 = 83,878,302,400 B per
		// rank against 81,559 MiB × 0.9 = 76,968,728,985 B requested.
		{"weights-do-not-fit", "prefill", Deny,
			func(e *Env) {
				p := poolNamed(e, "prefill")
				p.GPU, p.TP, p.ModelFits, p.WeightsBytes, p.OverheadBytes, p.RequestedBytes = "h100-sxm", 8, false, 83878302400, 4<<30, 76968728985
				p.WeightsShortBytes = 83878302400 + 4<<30 - 76968728985
				p.FitTP, p.FitFP8, p.FitGPU, p.KVSlotsTokens = 16, false, "h200", 0
			},
			func(e *Env) {
				p := poolNamed(e, "prefill")
				p.GPU, p.TP, p.WeightsBytes, p.RequestedBytes = "h200", 8, 83878302400, 129414300000
			},
			"pool prefill cannot start: 78 GiB of weights per rank (tp 8) + 4.0 GiB of activation, non-torch and CUDA-graph overhead exceed the 72 GiB that gpu_memory_utilization = 0.9 gives of one h100-sxm by 10 GiB"},
		// The L4 plan: 32 requests on 4 workers, 8 each of ~4,750 tokens (38,000) against ~31,000 slots.
		{"kv-in-flight-exceeds-slots", "decode", Deny,
			func(e *Env) {
				e.Workload.InputTokens, e.Workload.OutputTokens = 4500, 250
				p := poolNamed(e, "decode")
				p.Workers, p.ConcurrencyPerWorker, p.RequestsInFlight, p.KVSlotsTokens = 4, 8, 32, 31008
				p.KVTokensInFlight, p.MaxRequestsThatFit = 8*297*16, 6 // ceil(4,750 / 16) = 297 blocks each; 1,938 blocks / 297 = 6
			},
			func(e *Env) { p := poolNamed(e, "decode"); p.KVSlotsTokens, p.KVTokensInFlight = 38016, 38016 },
			"pool decode: 8 requests in flight per worker × (4,500 + 250 tokens) hold 38,016 tokens of KV, more than the 31,008 tokens of slots of one worker: vLLM will queue or preempt them and TTFT explodes; at most 6 in flight per worker fit"},
		{"kv-in-flight-exceeds-slots", "prefill", Deny, // no slots because the weights do not fit
			func(e *Env) { p := poolNamed(e, "prefill"); p.ModelFits, p.KVSlotsTokens = false, 0 },
			func(e *Env) {
				p := poolNamed(e, "prefill")
				p.KVTokensInFlight = 0
				p.ModelFits, p.KVSlotsTokens = false, 0
			},
			"pool prefill cannot start (weights-do-not-fit), so it has no KV slots for its 4 requests in flight per worker"},
		// 20,000-token prompts (+ 128 out) against max_model_len 16,384.
		{"prompt-exceeds-max-model-len", "decode", Deny,
			func(e *Env) {
				e.Workload.InputTokens = 20000
				p := poolNamed(e, "decode")
				p.MaxModelLen, p.RequestTokens = 16384, 20128
			},
			func(e *Env) { p := poolNamed(e, "decode"); p.MaxModelLen, p.RequestTokens = 16384, 16384 },
			"pool decode: each request is 20,128 tokens (20,000 input + 128 output), more than max_model_len = 16,384 tokens"},
		{"tp-not-divisible", "prefill", Deny,
			func(e *Env) {
				poolNamed(e, "prefill").TPError = "tp 3 does not fit llama-3.1-70b: 64 attention heads are not divisible by tp 3"
			},
			func(e *Env) { poolNamed(e, "prefill").TP = 3 }, // a tp the planner found no problem with
			"pool prefill: tp 3 does not fit llama-3.1-70b: 64 attention heads are not divisible by tp 3"},
		// DeepSeek-V3's 256 routed experts over EP 12: 256 % 12 = 4, so 12 − 4 = 8
		// redundant experts make 264 = 22 × 12; EP 16 divides 256.
		{"ep-not-dividing-experts", "decode", Deny,
			func(e *Env) {
				e.Model.Name, e.Model.RoutedExperts = "deepseek-v3", 256
				p := poolNamed(e, "decode")
				p.TP, p.DataParallelSize, p.ExpertParallelSize = 1, 12, 12
			},
			func(e *Env) {
				e.Model.Name, e.Model.RoutedExperts = "deepseek-v3", 256
				p := poolNamed(e, "decode")
				p.TP, p.DataParallelSize, p.ExpertParallelSize = 1, 16, 16
			},
			"expert_parallel_size 12 does not divide the 256 routed experts of deepseek-v3: 8 redundant experts (EPLB) would make 264 = 22 per rank × 12"},
		// With EPLB's 32 redundant experts, 256 + 32 = 288 = 24 × 12 divides; 20
		// redundant (276 % 12 = 0 too: 23 × 12) would as well, but 16 do not:
		// 272 % 12 = 8, so 16 + 12 − 8 = 20 redundant make 276.
		{"ep-not-dividing-experts", "decode", Deny,
			func(e *Env) {
				e.Model.Name, e.Model.RoutedExperts = "deepseek-v3", 256
				p := poolNamed(e, "decode")
				p.TP, p.DataParallelSize, p.ExpertParallelSize, p.RedundantExperts = 1, 12, 12, 16
			},
			func(e *Env) {
				e.Model.Name, e.Model.RoutedExperts = "deepseek-v3", 256
				p := poolNamed(e, "decode")
				p.TP, p.DataParallelSize, p.ExpertParallelSize, p.RedundantExperts = 1, 12, 12, 32
			},
			"does not divide the 256 routed experts of deepseek-v3 + 16 redundant = 272: 20 redundant experts (EPLB) would make 276 = 23 per rank × 12"},
		// tp 4 × dp 1 = 4 ranks cannot hold EP 8; tp 8 can (MoE tp 1).
		{"ep-not-dividing-ranks", "decode", Deny,
			func(e *Env) {
				e.Model.Name, e.Model.RoutedExperts = "deepseek-v3", 256
				p := poolNamed(e, "decode")
				p.TP, p.DataParallelSize, p.ExpertParallelSize = 4, 1, 8
			},
			func(e *Env) {
				e.Model.Name, e.Model.RoutedExperts = "deepseek-v3", 256
				p := poolNamed(e, "decode")
				p.TP, p.DataParallelSize, p.ExpertParallelSize = 8, 1, 8
			},
			"expert_parallel_size 8 does not divide the 4 ranks of the MoE layer (tp 4 × data_parallel_size 1)"},
		{"ep-on-dense-model", "prefill", Deny,
			func(e *Env) { poolNamed(e, "prefill").ExpertParallelSize = 2 },
			func(e *Env) { e.Model.RoutedExperts = 128; poolNamed(e, "prefill").ExpertParallelSize = 2 },
			"pool prefill: expert_parallel_size 2 on qwen3-0.6b, which has no routed experts to spread"},
		{"dp-on-dense-model", "decode", Info,
			func(e *Env) { poolNamed(e, "decode").DataParallelSize = 4 },
			func(e *Env) { e.Model.RoutedExperts = 128; poolNamed(e, "decode").DataParallelSize = 4 },
			"data_parallel_size 4 on the dense qwen3-0.6b is 4 plain replicas of tp 1 behind one endpoint: nothing is shared between them, so they are planned as 8 workers would be"},
		{"pipeline-exceeds-layers", "prefill", Deny,
			func(e *Env) { e.Model.Layers = 28; poolNamed(e, "prefill").PipelineParallelSize = 32 },
			func(e *Env) { e.Model.Layers = 28; poolNamed(e, "prefill").PipelineParallelSize = 28 },
			"pipeline_parallel_size 32 exceeds the 28 decoder layers of qwen3-0.6b"},
		{"mtp-without-mtp-layers", "decode", Deny,
			func(e *Env) { p := poolNamed(e, "decode"); p.SpeculativeTokens, p.AcceptanceLength = 2, 2.4 },
			func(e *Env) {
				p := poolNamed(e, "decode")
				p.SpeculativeTokens, p.AcceptanceLength, p.SpeculativeModel = 2, 2.4, "qwen3-0.6b-eagle"
			},
			"speculative_tokens 2 with no draft model, but qwen3-0.6b ships no multi-token-prediction layers"},
		// 16 GPUs per worker on 8-GPU HGX domains: ceil(16 / 8) = 2 domains.
		{"multi-node-worker-over-nvlink", "decode", Deny,
			func(e *Env) {
				e.Link.Name, e.Link.Scope = "nvlink4", "nvlink"
				p := poolNamed(e, "decode")
				p.GPU, p.NVLinkDomainGPUs, p.GPUsPerWorker, p.Layout = "h100-sxm", 8, 16, "tp1 dp16"
			},
			func(e *Env) {
				e.Link.Name, e.Link.Scope = "nvlink4", "nvlink"
				p := poolNamed(e, "decode")
				p.GPU, p.NVLinkDomainGPUs, p.GPUsPerWorker, p.Layout = "gb200", 72, 16, "tp1 dp16"
			},
			"a worker of 16 GPUs (tp1 dp16) spans 2 NVLink domains of 8 h100-sxm GPUs, but the link is nvlink4"},
		{"multi-node-worker-without-link", "decode", Warn,
			func(e *Env) {
				e.Link = LinkEnv{}
				p := poolNamed(e, "decode")
				p.GPU, p.NVLinkDomainGPUs, p.GPUsPerWorker, p.Layout = "h100-sxm", 8, 24, "tp8 pp3"
			},
			func(e *Env) {
				p := poolNamed(e, "decode")
				p.GPU, p.NVLinkDomainGPUs, p.GPUsPerWorker, p.Layout = "h100-sxm", 8, 24, "tp8 pp3"
			},
			"a worker of 24 GPUs (tp8 pp3) spans 3 NVLink domains of 8 h100-sxm GPUs, and the plan names no [link] between its nodes"},
		// 100 req/s × 1,524 tokens = 152,400 tokens/s against 98,322.6: ceil(100 × 0.031) = 4 workers needed.
		{"pool-capacity-exceeded", "prefill", Deny,
			func(e *Env) {
				p := poolNamed(e, "prefill")
				p.RequestRate, p.PrefillDemandPerS, p.PrefillWorkersNeeded = 100, 152400, 4
			},
			func(e *Env) {
				p := poolNamed(e, "prefill")
				p.RequestRate, p.PrefillDemandPerS, p.PrefillWorkersNeeded = 64, 97536, 2
			},
			"pool prefill must prefill 100 requests/s × 1,524 tokens uncached = 152,400 tokens/s, more than the 98,323 tokens/s of its 2 workers (the prefill of one request takes at least 31.00 ms on rtx4090 at tp 1): requests queue without bound; it needs at least 4 workers"},
		// With the capacity search's figures the floor no longer decides: the
		// pool fires because the deployment carries 14.5/s within the SLO, not
		// 20, and 3 prefill workers would; the near miss passes although the
		// floor alone would have fired.
		{"pool-capacity-exceeded", "prefill", Deny,
			func(e *Env) {
				p := poolNamed(e, "prefill")
				p.RequestRate, p.CapacityComputed, p.CapacityExceeded = 20, true, true
				p.CapacityRequestsPerS, p.CapacityWorkersNeeded, p.CapacityLimitedBy = 14.5, 3, "prefill compute"
				p.CapacitySLO = "TTFT p95 ≤ 1000 ms, ITL p95 ≤ 50 ms"
				e.Workload.RequestRate = 20
			},
			func(e *Env) {
				p := poolNamed(e, "prefill")
				p.RequestRate, p.PrefillDemandPerS, p.PrefillWorkersNeeded = 100, 152400, 4 // the floor says exceeded
				p.CapacityComputed, p.CapacityExceeded, p.CapacityRequestsPerS, p.CapacityWorkersNeeded = true, false, 120, 2
			},
			"pool prefill cannot carry workload.request_rate = 20 requests/s within TTFT p95 ≤ 1000 ms, ITL p95 ≤ 50 ms: as planned the deployment carries at most 14.5 requests/s, limited by prefill compute; this pool needs 3 workers (it has 2)"},
		{"link-saturated", "", Deny,
			func(e *Env) {
				e.Workload.RequestRate = 300
				e.Disagg.InFlightSource, e.Disagg.LinkUtilization, e.Disagg.BytesPerPath, e.Disagg.ParallelPaths = "request_rate", 1.23, 174784512, 1
			},
			func(e *Env) {
				e.Workload.RequestRate = 240
				e.Disagg.InFlightSource, e.Disagg.LinkUtilization = "request_rate", 0.98
			},
			"the link cannot carry workload.request_rate = 300/s: each request puts 167 MiB on its one path over ib-ndr, so the busiest path is 123.0% busy at 42.6 GB/s; transfers queue without bound"},
		// Two tp8 workers on H100 (one 8-GPU NVLink domain each): 16 GPUs
		// cannot all sit on one node's NVSwitches. The near miss: tp4 + tp4
		// in one 8-GPU domain.
		{"nvlink-beyond-its-domain", "", Deny,
			func(e *Env) {
				e.Link = LinkEnv{Name: "nvlink4", ThroughputBytesPerS: 380e9, LatencyMS: 0.01, RatePer: "gpu", Scope: "nvlink"}
				e.Disagg.PDGPUs, e.Disagg.NVLinkDomainGPUs = 16, 8
			},
			func(e *Env) {
				e.Link = LinkEnv{Name: "nvlink4", ThroughputBytesPerS: 380e9, LatencyMS: 0.01, RatePer: "gpu", Scope: "nvlink"}
				e.Disagg.PDGPUs, e.Disagg.NVLinkDomainGPUs = 8, 8
			},
			"link nvlink4 is NVLink, which joins the GPUs of one NVLink domain only (8 GPUs of this type), but the prefill and decode pools span 16 GPUs"},
	}
	covered := map[string]bool{}
	for _, c := range cases {
		covered[c.rule] = true
		t.Run(c.rule, func(t *testing.T) {
			e := cleanEnv()
			c.fire(&e)
			fs := set.Evaluate(&e)
			var hit *Finding
			for i := range fs {
				if strings.HasPrefix(fs[i].RuleID, RuntimeErrorPrefix) {
					t.Errorf("runtime error: %s", fs[i].Message)
				}
				if fs[i].RuleID == c.rule {
					hit = &fs[i]
				}
			}
			if hit == nil {
				t.Fatalf("%s did not fire; fired: %v", c.rule, ids(fs))
			}
			if hit.Severity != c.severity || hit.Pool != c.pool {
				t.Errorf("severity %s pool %q, want %s %q", hit.Severity, hit.Pool, c.severity, c.pool)
			}
			if !strings.Contains(hit.Message, c.message) {
				t.Errorf("message %q\nwant it to contain %q", hit.Message, c.message)
			}
			if !strings.Contains(hit.Why, "FACTS §") || hit.Fix == "" {
				t.Errorf("why %q must cite FACTS and fix %q must be set", hit.Why, hit.Fix)
			}
			m := cleanEnv()
			c.miss(&m)
			for _, f := range set.Evaluate(&m) {
				if f.RuleID == c.rule {
					t.Errorf("%s fired on the near miss: %s", c.rule, f.Message)
				}
			}
		})
	}
	for _, r := range set.Rules {
		if !covered[r.ID] {
			t.Errorf("default rule %s has no test case", r.ID)
		}
	}
	clean := cleanEnv()
	if fs := set.Evaluate(&clean); len(fs) > 0 {
		t.Errorf("clean env fired %v", ids(fs))
	}
	if len(set.Rules) < 12 {
		t.Errorf("%d default rules, want at least 12", len(set.Rules))
	}
}

func ids(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, findingName(f))
	}
	return out
}

// TestZeroEnvFiresNothing: figures the planner could not determine are 0,
// and no default rule may fire on unknowns alone.
func TestZeroEnvFiresNothing(t *testing.T) {
	set, err := Load(Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := Env{Pools: []PoolEnv{{Name: "a", Role: "aggregated"}}}
	if fs := set.Evaluate(&e); len(fs) > 0 {
		t.Errorf("zero env fired %v: %v", ids(fs), fs)
	}
}

// TestDefaultPackTemplates compiles every message and fix of the default
// pack: Load defers them to a rule's first firing (Rule.embedded), so an
// error in one must be caught here rather than by a plan that fires it.
func TestDefaultPackTemplates(t *testing.T) {
	set, err := Load(Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range set.Rules {
		if r.deferred == nil {
			t.Errorf("%s: templates not deferred", r.ID)
			continue
		}
		if err := r.templates(); err != nil {
			t.Errorf("%s: %v", r.ID, err)
		}
		if len(r.message.parts) == 0 {
			t.Errorf("%s: empty message after compiling", r.ID)
		}
	}
}

// TestUserPackTemplatesAtLoad checks that a user pack's bad template is an
// error when the pack loads, not when its rule fires.
func TestUserPackTemplatesAtLoad(t *testing.T) {
	dir := t.TempDir()
	pack := `[[rule]]
id = "team/bad-template"
severity = "warn"
when = "false"
message = "needs ${bytes(pool.no_such_field)}"
why = "test"
fix = "none"
`
	if err := os.WriteFile(filepath.Join(dir, "team.toml"), []byte(pack), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(Options{Paths: []string{dir}})
	if err == nil || !strings.Contains(err.Error(), "no_such_field") {
		t.Errorf("a bad template in a user pack loaded: %v", err)
	}
}
