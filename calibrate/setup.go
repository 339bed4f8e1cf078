package calibrate

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/kvplan/kvplan/benchresult"
	"github.com/kvplan/kvplan/catalog"
	"github.com/kvplan/kvplan/models"
	"github.com/kvplan/kvplan/planner"
)

// Given is what the user states with flags, for what a result file does
// not say; a zero field is "not given". A given value that contradicts the
// file is an error naming both.
type Given struct {
	Model, GPU, Engine, EngineVersion string
	TP                                int
	DataParallel                      int // --data-parallel-size: replicas inside one server (SGLang's dp)
	Workers                           int // --workers: replicas behind one endpoint
	WeightDtype, KVDtype              string
	MaxNumSeqs, MaxNumBatchedTokens   int
	GPUUtil                           float64
	EnforceEager                      bool

	// The load and lengths, for files that do not state them (AIPerf's
	// CSV, an inference-perf summary).
	Concurrency          int
	RatePerS             float64
	InputTokens          int
	OutputTokens         int
	Prompts              int
	Seed                 uint64 // the timed simulator's arrival draws
	DefaultEngineIfUnset string // the engine when neither file nor flag says; "" = vllm
}

// Setup is one deployment a run is predicted on, resolved against the
// catalog.
type Setup struct {
	Catalog       *catalog.Catalog
	Model         *catalog.Model
	GPU           *catalog.GPU
	Engine        string // vllm, sglang, trtllm
	EngineVersion string // "" = the catalog's newest
	TP            int
	Replicas      int    // replicas behind the benchmark's endpoint (data parallel × workers)
	WeightDtype   string // the matmul weights' dtype (the efficiency entry's key)
	KVDtype       string // "" = the model's
	MaxNumSeqs    int    // 0 = the engine's default
	MaxBatchedTok int    // 0 = the engine's default
	// CUDAGraphMaxBatch is the largest iteration (tokens) the run captured
	// in CUDA graphs, where the tool fixes it; 0 = the engine model's default.
	CUDAGraphMaxBatch int
	GPUUtil           float64
	EnforceEager      bool
}

// Key is the efficiency entry the set-up uses: GPU × engine × weight dtype.
func (s *Setup) Key() string { return s.GPU.Name + " × " + s.Engine + " × " + s.WeightDtype }

// GPUs is the GPUs the deployment runs on.
func (s *Setup) GPUs() int { return s.TP * s.Replicas }

// Load is what the benchmark sent, as the prediction replays it.
type Load struct {
	Kind        string // benchresult.LoadConcurrency, LoadRate, LoadBurst or LoadOffline
	Concurrency int    // clients (closed loop) or the engine's batch cap (offline)
	RatePerS    float64
	Burstiness  float64 // gamma shape of the gaps; 1 = Poisson
	EvenGaps    bool
	Prompts     int

	InputTokens, OutputTokens float64 // means
	InputLens, OutputLens     []int   // per request, when the file has them
}

// Case is one run of a file, resolved: what it measured, its set-up and
// its load.
type Case struct {
	File  string
	Run   benchresult.Run
	Setup Setup
	Load  Load
	Notes []string // what was taken from flags or assumed

	rigs *rigs // the closed-loop replays, memory model done (set by Resolve)
}

// Name is "file, run 2 (line 3): 30 req/s" or, for a one-run file, "file".
func (c *Case) Name() string {
	if c.Run.Line > 0 || c.Run.Index > 0 {
		return fmt.Sprintf("%s, run %d: %s", c.File, c.Run.Index+1, c.Run.Label)
	}
	return c.File + ": " + c.Run.Label
}

// conflict is an error for a flag that contradicts the file.
func conflict(file, flag string, flagValue any, field string, fileValue any) error {
	return fmt.Errorf("%s: --%s %v contradicts the file, whose %s is %v; leave the flag out or give the file of that set-up", file, flag, flagValue, field, fileValue)
}

// Resolve turns every run of f into a Case: the file's set-up, completed
// by what is given, resolved against the catalog.
func Resolve(cat *catalog.Catalog, f *benchresult.File, g Given) ([]Case, error) {
	var out []Case
	for _, r := range f.Runs {
		c, err := resolveRun(cat, f, r, g)
		if err != nil {
			if len(f.Runs) > 1 {
				return nil, fmt.Errorf("run %d (%s): %w", r.Index+1, r.Label, err)
			}
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

func resolveRun(cat *catalog.Catalog, f *benchresult.File, r benchresult.Run, g Given) (Case, error) {
	c := Case{File: f.Path, Run: r, rigs: &rigs{by: map[int]*planner.PerfRig{}}}
	c.Notes = append(c.Notes, r.Notes...)
	s := &c.Setup
	s.Catalog, s.GPUUtil, s.EnforceEager = cat, g.GPUUtil, g.EnforceEager
	rs, file := r.Setup, f.Path
	var err error

	// The model.
	switch {
	case rs.Model == "" && g.Model == "":
		return c, fmt.Errorf("%s: the file does not name its model: give --model (kvplan models list)", file)
	case rs.Model == "":
		if s.Model, err = cat.Model(g.Model); err != nil {
			return c, err
		}
	default:
		fm, ferr := findModel(cat, rs.Model)
		switch {
		case ferr == nil && g.Model != "":
			gm, err := cat.Model(g.Model)
			if err != nil {
				return c, err
			}
			if gm.Name != fm.Name {
				return c, conflict(file, "model", g.Model, "model", fmt.Sprintf("%q (%s)", rs.Model, fm.Name))
			}
			s.Model = fm
		case ferr == nil:
			s.Model = fm
		case g.Model != "":
			if s.Model, err = cat.Model(g.Model); err != nil {
				return c, err
			}
			c.Notes = append(c.Notes, fmt.Sprintf("the file's model %q is not in the catalog: taken as --model %s", rs.Model, s.Model.Name))
		default:
			var nf *catalog.NotFoundError
			msg := ferr.Error()
			if errors.As(ferr, &nf) {
				msg = nf.Error()
			}
			return c, fmt.Errorf("%s: the file's model: %s; give --model, or add the model to a catalog (kvplan models import)", file, msg)
		}
	}

	// The GPU: files rarely say; vLLM's --metadata gpu=… does.
	fileGPU := findGPU(cat, rs.GPU)
	switch {
	case g.GPU != "":
		if s.GPU, err = cat.GPU(g.GPU); err != nil {
			return c, err
		}
		if fileGPU != nil && fileGPU.Name != s.GPU.Name {
			return c, conflict(file, "gpu", g.GPU, "gpu metadata", fmt.Sprintf("%q (%s)", rs.GPU, fileGPU.Name))
		}
	case fileGPU != nil:
		s.GPU = fileGPU
	case rs.GPU != "":
		return c, fmt.Errorf("%s: the file's GPU %q is not one kvplan knows: give --gpu (kvplan gpus list)", file, rs.GPU)
	default:
		return c, fmt.Errorf("%s: the file does not say which GPU ran it: give --gpu (kvplan gpus list)", file)
	}

	// The engine.
	s.Engine = rs.Engine
	switch {
	case g.Engine != "" && rs.Engine != "" && g.Engine != rs.Engine:
		return c, conflict(file, "engine", g.Engine, "engine", rs.Engine)
	case g.Engine != "":
		s.Engine = g.Engine
	case s.Engine == "":
		s.Engine = "vllm"
		if g.DefaultEngineIfUnset != "" {
			s.Engine = g.DefaultEngineIfUnset
		}
		c.Notes = append(c.Notes, fmt.Sprintf("the file does not name the serving engine: taken as %s (--engine)", s.Engine))
	}
	s.EngineVersion = rs.EngineVersion
	if g.EngineVersion != "" {
		if rs.EngineVersion != "" && g.EngineVersion != rs.EngineVersion {
			return c, conflict(file, "engine-version", g.EngineVersion, "engine version", rs.EngineVersion)
		}
		s.EngineVersion = g.EngineVersion
	}
	if s.EngineVersion != "" {
		if _, _, err := cat.EngineVersion(s.Engine, s.EngineVersion); err != nil {
			c.Notes = append(c.Notes, fmt.Sprintf("engine version %s: %v; the catalog's newest profile is used", s.EngineVersion, err))
			s.EngineVersion = ""
		}
	}

	// Parallelism.
	s.TP = rs.TP
	if g.TP > 0 {
		if rs.TP > 0 && g.TP != rs.TP {
			return c, conflict(file, "tensor-parallel-size", g.TP, "tp", rs.TP)
		}
		s.TP = g.TP
	}
	if s.TP == 0 {
		s.TP = 1
		c.Notes = append(c.Notes, "the file does not state tensor parallelism: tp 1 (--tp)")
	}
	if err := models.CheckTP(s.Model, s.TP); err != nil {
		return c, fmt.Errorf("%s: tp %d: %w", file, s.TP, err)
	}
	if rs.PP > 1 {
		return c, fmt.Errorf("%s: the file's set-up has pipeline parallelism %d, which kvplan's engine model does not model", file, rs.PP)
	}
	dp := rs.DP
	if g.DataParallel > 0 {
		if rs.DP > 0 && g.DataParallel != rs.DP {
			return c, conflict(file, "data-parallel-size", g.DataParallel, "dp_size", rs.DP)
		}
		dp = g.DataParallel
	}
	workers := rs.Replicas
	if g.Workers > 0 {
		if rs.Replicas > 0 && g.Workers != rs.Replicas {
			return c, conflict(file, "workers", g.Workers, "decode_replicas", rs.Replicas)
		}
		workers = g.Workers
	}
	s.Replicas = max(dp, 1) * max(workers, 1)
	if rs.GPUCount > 0 && rs.GPUCount != s.GPUs() {
		c.Notes = append(c.Notes, fmt.Sprintf("the file's metadata says %d GPUs; the set-up predicted has %d (tp %d × %d replicas)", rs.GPUCount, s.GPUs(), s.TP, s.Replicas))
	}

	// Dtypes and engine limits.
	s.WeightDtype = rs.WeightDtype
	if g.WeightDtype != "" {
		if rs.WeightDtype != "" && g.WeightDtype != rs.WeightDtype {
			return c, conflict(file, "weight-dtype", g.WeightDtype, "weight dtype", rs.WeightDtype)
		}
		s.WeightDtype = g.WeightDtype
	}
	if s.WeightDtype == "" {
		s.WeightDtype = s.Model.WeightDtype
	}
	s.KVDtype = rs.KVDtype
	if g.KVDtype != "" {
		if rs.KVDtype != "" && g.KVDtype != rs.KVDtype {
			return c, conflict(file, "kv-cache-dtype", g.KVDtype, "KV cache dtype", rs.KVDtype)
		}
		s.KVDtype = g.KVDtype
	}
	s.MaxNumSeqs = rs.MaxNumSeqs
	if g.MaxNumSeqs > 0 {
		if rs.MaxNumSeqs > 0 && g.MaxNumSeqs != rs.MaxNumSeqs {
			return c, conflict(file, "max-num-seqs", g.MaxNumSeqs, "batch cap", rs.MaxNumSeqs)
		}
		s.MaxNumSeqs = g.MaxNumSeqs
	}
	s.MaxBatchedTok = rs.MaxBatchedTok
	if g.MaxNumBatchedTokens > 0 {
		if rs.MaxBatchedTok > 0 && g.MaxNumBatchedTokens != rs.MaxBatchedTok {
			return c, conflict(file, "max-num-batched-tokens", g.MaxNumBatchedTokens, "tokens per iteration", rs.MaxBatchedTok)
		}
		s.MaxBatchedTok = g.MaxNumBatchedTokens
	}
	if f.Format == benchresult.FormatTRTLLMBench && s.MaxNumSeqs > 0 && !s.EnforceEager {
		// trtllm-bench's throughput heuristic (bench/tuning
		// PytMaxThroughputScenario) sets cuda_graph_config.max_batch_size
		// to the max batch size, with padding.
		s.CUDAGraphMaxBatch = s.MaxNumSeqs
		c.Notes = append(c.Notes, fmt.Sprintf("trtllm-bench captures CUDA graphs up to its max batch size: generation-only iterations of up to %d sequences run graphed", s.MaxNumSeqs))
	}
	if rs.KVTokens > 0 {
		c.Notes = append(c.Notes, fmt.Sprintf("the file states the engine's KV pool (%d tokens); kvplan takes the KV slots from its memory model", rs.KVTokens))
	}
	if err := c.resolveLoad(g); err != nil {
		return c, err
	}
	return c, nil
}

// findModel resolves a model as a file names it: a catalog name, alias or
// Hugging Face id, or a local path whose last element spells one with other
// separators ("/workspace/qwen-3-8b" is qwen3-8b).
func findModel(cat *catalog.Catalog, s string) (*catalog.Model, error) {
	m, err := cat.Model(s)
	if err == nil {
		return m, nil
	}
	squash := func(n string) string {
		n = strings.ToLower(n)
		if i := strings.LastIndexByte(n, '/'); i >= 0 {
			n = n[i+1:]
		}
		return strings.NewReplacer("-", "", "_", "", " ", "").Replace(n)
	}
	want := squash(s)
	for _, m := range cat.Models {
		for _, n := range append([]string{m.Name, m.HFID}, m.Aliases...) {
			if n != "" && squash(n) == want {
				return m, nil
			}
		}
	}
	return nil, err
}

// findGPU resolves a GPU as a file writes it ("NVIDIA_L40S", "H100 80GB
// HBM3"), or nil.
func findGPU(cat *catalog.Catalog, s string) *catalog.GPU {
	if s == "" {
		return nil
	}
	cands := []string{s}
	n := strings.ToLower(strings.NewReplacer("_", "-", " ", "-").Replace(s))
	n = strings.TrimPrefix(strings.TrimPrefix(n, "nvidia-"), "amd-")
	cands = append(cands, n)
	if i := strings.IndexByte(n, '-'); i > 0 {
		cands = append(cands, n[:i])
	}
	for _, c := range cands {
		if g, err := cat.GPU(c); err == nil {
			return g
		}
	}
	return nil
}

// resolveLoad takes the load and lengths from the file, or from what is
// given when the file does not say; given values that contradict it are
// errors.
func (c *Case) resolveLoad(g Given) error {
	w, ld, file := c.Run.Workload, &c.Load, c.File
	ld.Kind, ld.Concurrency, ld.RatePerS, ld.Burstiness, ld.EvenGaps = w.Kind, w.Concurrency, w.RatePerS, w.Burstiness, w.EvenGaps
	ld.Prompts = w.Prompts
	switch {
	case g.Concurrency > 0 && g.RatePerS > 0:
		return fmt.Errorf("--concurrency and --request-rate: give one load")
	case g.Concurrency > 0 && w.Kind == benchresult.LoadConcurrency && g.Concurrency != w.Concurrency:
		return conflict(file, "concurrency", g.Concurrency, "concurrency", w.Concurrency)
	case g.Concurrency > 0 && w.Kind != benchresult.LoadUnknown && w.Kind != benchresult.LoadConcurrency:
		return conflict(file, "concurrency", g.Concurrency, "load", c.Run.Label)
	case g.RatePerS > 0 && w.Kind == benchresult.LoadRate && math.Abs(g.RatePerS-w.RatePerS) > 1e-9*w.RatePerS:
		return conflict(file, "request-rate", g.RatePerS, "request rate", w.RatePerS)
	case g.RatePerS > 0 && w.Kind != benchresult.LoadUnknown && w.Kind != benchresult.LoadRate:
		return conflict(file, "request-rate", g.RatePerS, "load", c.Run.Label)
	case g.Concurrency > 0:
		ld.Kind, ld.Concurrency = benchresult.LoadConcurrency, g.Concurrency
		if w.Kind == benchresult.LoadUnknown {
			c.Run.Label = fmt.Sprintf("concurrency %d (--concurrency)", g.Concurrency)
		}
	case g.RatePerS > 0:
		ld.Kind, ld.RatePerS = benchresult.LoadRate, g.RatePerS
		if w.Kind == benchresult.LoadUnknown {
			c.Run.Label = fmt.Sprintf("%s req/s (--request-rate)", fmtRate(g.RatePerS))
		}
	case w.Kind == benchresult.LoadUnknown:
		return fmt.Errorf("%s: the file does not state the load: give --concurrency N (a closed loop) or --request-rate R (requests per second)", file)
	}
	if ld.Kind == benchresult.LoadRate && ld.Burstiness == 0 && !ld.EvenGaps {
		ld.Burstiness = 1
		c.Notes = append(c.Notes, "the file does not state how sends were spaced: taken as Poisson")
	}
	if g.Prompts > 0 {
		if w.Prompts > 0 && g.Prompts != w.Prompts {
			return conflict(file, "num-prompts", g.Prompts, "prompts", w.Prompts)
		}
		ld.Prompts = g.Prompts
	}
	if ld.Prompts == 0 {
		ld.Prompts = max(w.Completed, 0)
	}
	in, out := w.InputTokensMean, w.OutputTokensMean
	for _, x := range []struct {
		flag       string
		given      int
		file, dst  *float64
		what, from string
	}{
		{"input-tokens", g.InputTokens, &in, &ld.InputTokens, "mean input length", "input"},
		{"output-tokens", g.OutputTokens, &out, &ld.OutputTokens, "mean output length", "output"},
	} {
		switch {
		case *x.file > 0 && x.given > 0 && math.Abs(float64(x.given)-*x.file) > 0.5:
			return conflict(file, x.flag, x.given, x.what, fmt.Sprintf("%.1f tokens", *x.file))
		case *x.file > 0:
			*x.dst = *x.file
		case x.given > 0:
			*x.dst = float64(x.given)
		default:
			return fmt.Errorf("%s: the file does not state the %s tokens per request: give --%s", file, x.from, x.flag)
		}
	}
	if len(w.InputLens) > 0 {
		ld.InputLens, ld.OutputLens = w.InputLens, w.OutputLens
	}
	return nil
}
