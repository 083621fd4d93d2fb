// The "Smoothing" spin box of the pages that plot a training loss: the TensorBoard weight,
// kept between sessions, 0 for the raw curve.
#pragma once

class QDoubleSpinBox;

namespace oomlab::ui {

constexpr double kDefaultLossSmoothing = 0.6;  // TensorBoard's default

// A spin box holding the saved weight; it saves every change.
QDoubleSpinBox* createSmoothingBox();

}  // namespace oomlab::ui
