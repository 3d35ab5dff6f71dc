#include "train/loss_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace hotline::train {
namespace {

std::string Num(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else if (c == '"')
      out += "&quot;";
    else
      out.push_back(c);
  }
  return out;
}

}  // namespace

std::string LossCurveSvg(const std::vector<LossPoint>& train, const std::vector<LossPoint>& eval,
                         const std::string& title) {
  constexpr double W = 720, H = 420, L = 60, R = 20, T = 40, B = 50;
  double x_max = 1, y_min = INFINITY, y_max = -INFINITY;
  for (const auto* series : {&train, &eval}) {
    for (const LossPoint& p : *series) {
      if (!std::isfinite(p.loss)) continue;
      x_max = std::max(x_max, double(p.step));
      y_min = std::min(y_min, p.loss);
      y_max = std::max(y_max, p.loss);
    }
  }
  if (!std::isfinite(y_min)) {
    y_min = 0;
    y_max = 1;
  }
  y_min = std::max(0.0, std::floor(y_min));
  y_max = std::max(y_min + 1, std::ceil(y_max));
  auto px = [&](double x) { return L + (W - L - R) * x / x_max; };
  auto py = [&](double y) { return H - B - (H - T - B) * (y - y_min) / (y_max - y_min); };

  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Num(W, 0) +
                  "\" height=\"" + Num(H, 0) + "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  s += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  s += "<text x=\"" + Num(W / 2, 0) + "\" y=\"22\" text-anchor=\"middle\" font-size=\"14\">" +
       Escape(title) + "</text>\n";
  // Axes and ticks.
  s += "<path d=\"M" + Num(L, 1) + " " + Num(T, 1) + " V" + Num(H - B, 1) + " H" + Num(W - R, 1) +
       "\" stroke=\"black\" fill=\"none\"/>\n";
  for (int i = 0; i <= 5; ++i) {
    const double y = y_min + (y_max - y_min) * i / 5.0;
    const double x = x_max * i / 5.0;
    s += "<text x=\"" + Num(L - 6, 1) + "\" y=\"" + Num(py(y) + 4, 1) + "\" text-anchor=\"end\">" +
         Num(y, 2) + "</text>\n";
    s += "<path d=\"M" + Num(L, 1) + " " + Num(py(y), 1) + " H" + Num(W - R, 1) +
         "\" stroke=\"#ddd\"/>\n";
    s += "<text x=\"" + Num(px(x), 1) + "\" y=\"" + Num(H - B + 18, 1) +
         "\" text-anchor=\"middle\">" + Num(x, 0) + "</text>\n";
  }
  s += "<text x=\"" + Num((L + W - R) / 2, 0) + "\" y=\"" + Num(H - 12, 0) +
       "\" text-anchor=\"middle\">step</text>\n";
  s += "<text x=\"16\" y=\"" + Num((T + H - B) / 2, 0) +
       "\" text-anchor=\"middle\" transform=\"rotate(-90 16 " + Num((T + H - B) / 2, 0) +
       ")\">loss (nats/token)</text>\n";
  auto line = [&](const std::vector<LossPoint>& pts, const char* color, const char* name,
                  double legend_y) {
    if (pts.empty()) return;
    std::string d;
    for (const LossPoint& p : pts) {
      if (!std::isfinite(p.loss)) continue;
      d += (d.empty() ? "M" : " L") + Num(px(p.step), 1) + " " + Num(py(p.loss), 1);
    }
    s += "<path d=\"" + d + "\" stroke=\"" + color + "\" stroke-width=\"1.5\" fill=\"none\"/>\n";
    s += "<path d=\"M" + Num(W - R - 150, 0) + " " + Num(legend_y, 0) + " h24\" stroke=\"" + color +
         "\" stroke-width=\"2\"/>\n";
    s += "<text x=\"" + Num(W - R - 120, 0) + "\" y=\"" + Num(legend_y + 4, 0) + "\">" + name +
         "</text>\n";
  };
  line(train, "#1f77b4", "training loss", T + 10);
  line(eval, "#d62728", "held-out loss", T + 28);
  s += "</svg>\n";
  return s;
}

}  // namespace hotline::train
