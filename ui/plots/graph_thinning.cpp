#include "plots/graph_thinning.h"

#include <qcustomplot.h>

#include <algorithm>

namespace oomlab::ui {

void thinGraph(QCPGraph* graph, int most) {
    const QSharedPointer<QCPGraphDataContainer> data = graph->data();
    const int size = data->size();
    if (size <= most) {
        return;
    }
    // Up to four points a bucket: about `most / 2` points kept, room to grow again.
    const int buckets = std::max(1, most / 8);
    const int perBucket = (size + buckets - 1) / buckets;
    QVector<QCPGraphData> kept;
    kept.reserve(4 * buckets);
    const auto begin = data->constBegin();
    for (int start = 0; start < size; start += perBucket) {
        const auto first = begin + start;
        const auto end = begin + std::min(size, start + perBucket);
        const auto byValue = [](const QCPGraphData& a, const QCPGraphData& b) {
            return a.value < b.value;
        };
        auto chosen = {first, std::min_element(first, end, byValue),
                       std::max_element(first, end, byValue), end - 1};
        QVector<QCPGraphDataContainer::const_iterator> points(chosen);
        std::sort(points.begin(), points.end());
        points.erase(std::unique(points.begin(), points.end()), points.end());
        for (const auto point : points) {
            kept.push_back(*point);
        }
    }
    data->set(kept, true);
}

}  // namespace oomlab::ui
