package catalog

// OnDemandUSD is the GPU's on-demand price per GPU-hour, or nil when the
// catalog has none (usd_per_hour = 0 means unknown, never free). Every
// command that prints or sums a price asks here, and prints nil as
// "unknown" (units.USDOrUnknown).
func (g *GPU) OnDemandUSD() *float64 {
	if g == nil || g.USDPerHour <= 0 {
		return nil
	}
	v := g.USDPerHour
	return &v
}

// SpotUSD is the GPU's spot price sample per GPU-hour, or nil when unknown.
func (g *GPU) SpotUSD() *float64 {
	if g == nil || g.USDPerHourSpot <= 0 {
		return nil
	}
	v := g.USDPerHourSpot
	return &v
}
