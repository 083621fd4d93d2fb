// Smoothing of a noisy training loss as TensorBoard's scalar plots do it: an exponential
// moving average with weight w in [0, 1), debiased so the first points are not pulled
// towards zero. w = 0 leaves the values as they are.
#pragma once

#include <QVector>

#include <cmath>

namespace oomlab::ui {

class LossSmoother {
public:
    static constexpr double kMaxWeight = 0.99;

    explicit LossSmoother(double weight = 0) : m_weight(weight) {}

    double next(double value) {
        if (!std::isfinite(value)) {
            return value;  // a diverged step is shown, not folded into the average
        }
        ++m_count;
        m_average = m_average * m_weight + (1 - m_weight) * value;
        return m_average / (1 - std::pow(m_weight, m_count));
    }

    QVector<double> smooth(const QVector<double>& values) {
        QVector<double> out;
        out.reserve(values.size());
        for (const double value : values) {
            out.push_back(next(value));
        }
        return out;
    }

    void reset() { *this = LossSmoother(m_weight); }
    double weight() const { return m_weight; }

private:
    double m_weight;
    double m_average = 0;
    int m_count = 0;
};

}  // namespace oomlab::ui
