// A live graph that grows without end (a long run's steps) kept drawable in bounded memory:
// past a few thousand points, each run of consecutive points is cut to its first, lowest,
// highest and last, so the line's envelope and every peak stay as drawn.
#pragma once

class QCPGraph;

namespace oomlab::ui {

inline constexpr int kMostGraphPoints = 4000;

// Thins `graph` to about half of `most` points when it holds more than `most`; each point
// kept is one it had.
void thinGraph(QCPGraph* graph, int most = kMostGraphPoints);

}  // namespace oomlab::ui
