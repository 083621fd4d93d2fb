#include "common/run_types.h"

namespace oomlab::ui {

void registerRunTypes() {
    qRegisterMetaType<MetricBatch>();
    qRegisterMetaType<RunEnd>();
    qRegisterMetaType<LessonEnd>();
    qRegisterMetaType<ExperimentInfo>();
    qRegisterMetaType<ExperimentConfig>();
    qRegisterMetaType<EventRow>();
    qRegisterMetaType<TrainProgress>();
}

}  // namespace oomlab::ui
