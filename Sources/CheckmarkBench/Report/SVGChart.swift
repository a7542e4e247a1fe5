import Foundation

/// A line chart as inline SVG (no scripts, no external assets): series of (x, y) points on linear
/// axes, with tick labels supplied by the caller.
struct SVGChart {
    struct Series {
        var name: String
        var color: String
        var points: [(x: Double, y: Double)]
    }

    var title: String
    var xLabel: String
    var yLabel: String
    var series: [Series]
    /// Tick positions and their labels on the x axis; nil: five even ticks.
    var xTicks: [(Double, String)]?
    var width = 720.0
    var height = 300.0

    private let left = 70.0, right = 20.0, top = 30.0, bottom = 45.0

    func render() -> String {
        let all = series.flatMap(\.points)
        guard !all.isEmpty else { return "<p><em>\(escape(title)): no data</em></p>" }
        let minX = all.map(\.x).min()!, maxX = max(all.map(\.x).max()!, minX + 1e-9)
        let maxY = max(all.map(\.y).max()! * 1.08, 1e-9)
        let plotW = width - left - right, plotH = height - top - bottom
        func px(_ x: Double) -> Double { left + (x - minX) / (maxX - minX) * plotW }
        func py(_ y: Double) -> Double { top + plotH - y / maxY * plotH }
        var svg = #"<svg xmlns="http://www.w3.org/2000/svg" width="\#(Int(width))" height="\#(Int(height))" viewBox="0 0 \#(Int(width)) \#(Int(height))" font-family="sans-serif" font-size="11">"#
        svg += #"<text x="\#(left)" y="18" font-size="13" font-weight="bold">\#(escape(title))</text>"#
        svg += #"<rect x="\#(left)" y="\#(top)" width="\#(plotW)" height="\#(plotH)" fill="none" stroke="gray"/>"#
        for i in 0...4 {
            let y = maxY * Double(i) / 4
            svg += #"<line x1="\#(left)" x2="\#(left + plotW)" y1="\#(py(y))" y2="\#(py(y))" stroke="gainsboro"/>"#
            svg += #"<text x="\#(left - 6)" y="\#(py(y) + 4)" text-anchor="end">\#(Self.number(y))</text>"#
        }
        let ticks = xTicks ?? (0...4).map { i in
            let x = minX + (maxX - minX) * Double(i) / 4
            return (x, Self.number(x))
        }
        for (x, label) in ticks where x >= minX - 1e-9 && x <= maxX + 1e-9 {
            svg += #"<line x1="\#(px(x))" x2="\#(px(x))" y1="\#(top)" y2="\#(top + plotH)" stroke="gainsboro"/>"#
            svg += #"<text x="\#(px(x))" y="\#(top + plotH + 15)" text-anchor="middle">\#(escape(label))</text>"#
        }
        svg += #"<text x="\#(left + plotW / 2)" y="\#(height - 6)" text-anchor="middle">\#(escape(xLabel))</text>"#
        svg += #"<text x="14" y="\#(top + plotH / 2)" text-anchor="middle" transform="rotate(-90 14 \#(top + plotH / 2))">\#(escape(yLabel))</text>"#
        for (index, line) in series.enumerated() where !line.points.isEmpty {
            let path = line.points.map { "\(Self.fixed(px($0.x))),\(Self.fixed(py($0.y)))" }.joined(separator: " ")
            svg += #"<polyline fill="none" stroke="\#(line.color)" stroke-width="1.8" points="\#(path)"/>"#
            let legendY = top + 14 + Double(index) * 14
            svg += #"<rect x="\#(left + 10)" y="\#(legendY - 9)" width="10" height="10" fill="\#(line.color)"/>"#
            svg += #"<text x="\#(left + 24)" y="\#(legendY)">\#(escape(line.name))</text>"#
        }
        return svg + "</svg>"
    }

    static func number(_ value: Double) -> String {
        if value >= 1_000_000 { return String(format: "%.1fM", value / 1e6) }
        if value >= 10_000 { return String(format: "%.0fk", value / 1e3) }
        if value >= 100 { return String(format: "%.0f", value) }
        if value >= 1 { return String(format: "%.1f", value) }
        return String(format: "%.2f", value)
    }

    static func fixed(_ value: Double) -> String { String(format: "%.1f", value) }

    private func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }
}
