package rules

import (
	"math/rand/v2"
	"testing"
)

// genEnvs builds n varied Envs from cleanEnv, so that rules fire on some
// and not on others (about a third fire at least one rule).
func genEnvs(n int) []Env {
	r := rand.New(rand.NewPCG(1, 2))
	modes := []string{"kv", "round-robin", "random"}
	tls := [][]string{nil, {"tcp", "self"}, {"cuda_ipc"}, {"rc", "tcp"}}
	drivers := []string{"570.133", "575.51", "580.65"}
	builds := []string{"12.8", "12.9", "13.0"}
	out := make([]Env, n)
	for i := range out {
		e := cleanEnv()
		e.Pools = append([]PoolEnv(nil), e.Pools...)
		e.Router.Mode = modes[r.IntN(3)]
		e.Router.KVEvents = r.IntN(4) > 0
		e.Transport = NewTransport(tls[r.IntN(4)])
		e.Runtime = NewRuntime("vllm", builds[r.IntN(3)], drivers[r.IntN(3)])
		e.Disagg.TransferMSShared = r.Float64() * 100
		e.Disagg.SameGPU = r.IntN(8) == 0
		e.Routing.WorkingSetTokens = r.IntN(60000)
		e.Predicted.TTFTMS = r.Float64() * 700
		e.Pools[1].HostRequiredBytes = r.IntN(12 << 30)
		e.Pools[1].StagesKVInHost = r.IntN(2) == 0
		e.Pools[0].MaxModelLenFits = r.IntN(10) > 0
		e.Pools[0].KVTokensInFlight = r.IntN(200000)
		e.Pools[0].RequestTokens = 1000 + r.IntN(5000)
		e.Pools[1].ModelFits = r.IntN(10) > 0
		e.Pools[1].RequestRate = r.Float64() * 100
		e.Pools[1].PrefillDemandPerS = e.Pools[1].RequestRate * 1524
		if r.IntN(10) == 0 {
			e.Pools[1].TPError = "tp 3 does not fit qwen3-0.6b: 16 attention heads are not divisible by tp 3"
		}
		e.Disagg.InFlightSource, e.Disagg.LinkUtilization = "request_rate", r.Float64()*1.5
		out[i] = e
	}
	return out
}

// BenchmarkDefaultPack evaluates the default pack over 10,000 generated
// Envs; ns/op is per Env with every default rule (findings rendered).
func BenchmarkDefaultPack(b *testing.B) {
	set, err := Load(Options{})
	if err != nil {
		b.Fatal(err)
	}
	envs := genEnvs(10000)
	fired := 0
	for i := range envs {
		fired += len(set.Evaluate(&envs[i]))
	}
	b.ReportMetric(float64(fired)/float64(len(envs)), "findings/env")
	b.ResetTimer()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		set.Evaluate(&envs[i%len(envs)])
	}
}
