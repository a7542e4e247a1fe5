import Foundation

/// `report.html`: one self-contained page (inline CSS and SVG, no scripts or external assets) with
/// the run's parameters, the latency table, HdrHistogram percentile plots and rates over time.
struct HTMLReport {
    let report: BenchReport

    static let palette = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf", "#7f7f7f"]

    func render() -> String {
        var html = """
        <!doctype html><html><head><meta charset="utf-8"><title>checkmark bench \(escape(report.scenario))</title>
        <style>body{font-family:sans-serif;margin:24px;max-width:1000px}table{border-collapse:collapse;margin:8px 0 20px}
        td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}th{background:#f4f4f4}td:first-child,th:first-child{text-align:left}
        .warn{color:#b00}code{background:#f4f4f4;padding:1px 4px}</style></head><body>
        <h1>checkmark bench: \(escape(report.scenario))</h1>
        <p>\(escape(report.startedAt)) · \(report.durationSeconds) s measured after \(report.warmupSeconds) s warm-up · target: \(escape(report.target))</p>
        <p><code>\(escape(report.command))</code></p>
        """
        html += "<h2>Parameters and machine</h2><table>"
        for (key, value) in report.parameters.sorted(by: { $0.key < $1.key }) { html += "<tr><td>\(escape(key))</td><td>\(escape(value))</td></tr>" }
        for (key, value) in report.machine.sorted(by: { $0.key < $1.key }) { html += "<tr><td>machine \(escape(key))</td><td>\(escape(value))</td></tr>" }
        html += "</table>"
        for warning in report.warnings { html += "<p class=\"warn\">warning: \(escape(warning))</p>" }
        html += "<h2>Latency</h2><table><tr><th>metric</th><th>count</th><th>p50</th><th>p90</th><th>p99</th><th>p99.9</th><th>max</th></tr>"
        for metric in report.metrics where metric.count > 0 {
            html += "<tr><td>\(escape(metric.name))</td><td>\(metric.count)</td>"
            for value in [metric.p50, metric.p90, metric.p99, metric.p999, metric.max] {
                html += "<td>\(escape(BenchReport.format(microseconds: value)))</td>"
            }
            html += "</tr>"
        }
        html += "</table><h2>Counts</h2><table><tr><th>count</th><th>total</th><th>per second</th></tr>"
        for counter in report.counters where counter.total > 0 {
            html += "<tr><td>\(escape(counter.key))</td><td>\(counter.total)</td><td>\(BenchReport.format(rate: counter.perSecond))</td></tr>"
        }
        html += "</table>"
        if !report.figures.isEmpty {
            html += "<h2>Figures</h2><table>"
            for (key, value) in report.figures.sorted(by: { $0.key < $1.key }) {
                html += "<tr><td>\(escape(key))</td><td>\(BenchReport.format(rate: value))</td></tr>"
            }
            html += "</table>"
        }
        html += "<h2>Latency percentiles (HdrHistogram, coordinated omission accounted for)</h2>"
        let measured = report.metrics.filter { $0.count > 0 }
        if !measured.isEmpty {
            // x = log10(1 / (1 - percentile)): 90% at 1, 99% at 2, 99.9% at 3.
            let series = measured.enumerated().map { index, metric in
                SVGChart.Series(name: metric.name, color: Self.palette[index % Self.palette.count], points: metric.curve.compactMap { pair in
                    guard pair[0] < 100 else { return nil }
                    return (log10(1 / (1 - pair[0] / 100)), pair[1] / 1_000)
                })
            }
            let ticks: [(Double, String)] = [(0, "0%"), (1, "90%"), (2, "99%"), (3, "99.9%"), (4, "99.99%"), (5, "99.999%")]
            html += SVGChart(title: "latency by percentile", xLabel: "percentile", yLabel: "ms", series: series, xTicks: ticks).render()
        }
        html += "<h2>Over time</h2>"
        let rateKeys = Counter.allCases.map(\.key).filter { key in report.timeline.contains { ($0.rates[key] ?? 0) > 0 } }
        let rateSeries = rateKeys.enumerated().map { index, key in
            SVGChart.Series(name: "\(key)/s", color: Self.palette[index % Self.palette.count],
                            points: report.timeline.map { (Double($0.second), Double($0.rates[key] ?? 0)) })
        }
        html += SVGChart(title: "rates", xLabel: "second", yLabel: "per second", series: rateSeries).render()
        let p99 = report.timeline.compactMap { point in point.messageNewP99.map { (Double(point.second), Double($0) / 1_000) } }
        if !p99.isEmpty {
            html += SVGChart(title: "message.new p99 per second", xLabel: "second", yLabel: "ms",
                             series: [.init(name: "p99", color: Self.palette[1], points: p99)]).render()
        }
        let cpu = [
            SVGChart.Series(name: "server", color: Self.palette[0], points: report.timeline.compactMap { p in p.serverCores.map { (Double(p.second), $0) } }),
            SVGChart.Series(name: "harness", color: Self.palette[3], points: report.timeline.compactMap { p in p.harnessCores.map { (Double(p.second), $0) } }),
        ]
        html += SVGChart(title: "CPU (cores busy)", xLabel: "second", yLabel: "cores", series: cpu).render()
        let rss = report.timeline.compactMap { p in p.serverResidentBytes.map { (Double(p.second), Double($0) / 1_048_576) } }
        if !rss.isEmpty {
            html += SVGChart(title: "server resident memory", xLabel: "second", yLabel: "MiB", series: [.init(name: "RSS", color: Self.palette[2], points: rss)]).render()
        }
        if !report.errors.isEmpty {
            html += "<h2>Errors seen</h2><ul>" + report.errors.map { "<li><code>\(escape($0))</code></li>" }.joined() + "</ul>"
        }
        return html + "</body></html>\n"
    }

    private func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
            .replacingOccurrences(of: "\"", with: "&quot;")
    }
}
