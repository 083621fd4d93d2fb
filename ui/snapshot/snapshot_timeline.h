// A memory snapshot's timeline: what was allocated and reserved after each event of a device's
// trace (MiB), the peak and the out-of-memory events marked, and the stages the program
// annotated with the highest peaks shaded where they ran. A click (not a drag) chooses the
// moment to look at, shown as a dotted line.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "oomlab/snapshot_reader/snapshot_report.h"
#include "plots/themed_plot.h"

namespace oomlab::ui {

class SnapshotTimeline : public ThemedPlot {
    Q_OBJECT

public:
    explicit SnapshotTimeline(QWidget* parent = nullptr);

    void setDevice(const SnapshotDevice& device);

    QCPGraph* allocated() const { return m_allocated; }
    QCPGraph* reserved() const { return m_reserved; }
    QCPGraph* replayed() const { return m_replayed; }
    // Reserved as the allocator's model replayed the trace under other settings (event,
    // bytes), drawn dashed over the recorded line; empty hides it.
    void setReplayed(const std::vector<std::pair<std::size_t, std::int64_t>>& line,
                     const QString& settings);

    // The shaded spans of annotated stages, and the stages they are of (the highest peaks,
    // at most kShadedStages).
    static constexpr std::size_t kShadedStages = 3;
    const std::vector<QCPItemRect*>& stageBands() const { return m_stageBands; }
    const std::vector<std::uint32_t>& shadedStages() const { return m_shadedStages; }

    // The dotted line at `event`, or none (the peak is shown).
    void showMoment(std::optional<std::size_t> event);
    std::optional<std::size_t> moment() const { return m_moment; }
    // The event under a pixel column, within the trace.
    std::size_t eventAt(double pixelX) const;

signals:
    // Clicked at `event` of the trace.
    void momentChosen(std::size_t event);

protected:
    void fitRanges() override;

private:
    void shadeStages(const SnapshotDevice& device);

    QCPGraph* m_allocated = nullptr;
    QCPGraph* m_reserved = nullptr;
    QCPGraph* m_replayed = nullptr;
    QCPItemStraightLine* m_momentLine = nullptr;
    std::vector<QCPItemRect*> m_stageBands;
    std::vector<std::uint32_t> m_shadedStages;
    std::optional<std::size_t> m_moment;
    std::size_t m_events = 0;
    QPointF m_pressedAt;
    Bounds m_x;
    Bounds m_y;
    Bounds m_recordedY;  // the recorded lines alone: a replay's range goes with its line
};

}  // namespace oomlab::ui
