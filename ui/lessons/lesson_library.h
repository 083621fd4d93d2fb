// Guided lessons: each a JSON file in resources/lessons,
//   {"name": "accumulation", "title": "...", "explanation": "...",
//    "runs": [{"label": "batch 256", "config": {"train.batch_size": 256, ...}}, ...]}
// whose run configs apply on top of the defaults (nested or flat keys, like config files).
#pragma once

#include <QString>
#include <QStringList>
#include <QVector>

#include "oomlab/config/experiment_config.h"

namespace oomlab::ui {

struct LessonRun {
    QString label;
    ExperimentConfig config;
    QStringList changedKeys;  // "key=value" that differ from the defaults
};

struct Lesson {
    QString name;
    QString title;
    QString explanation;
    QString file;
    QVector<LessonRun> runs;
};

struct LessonLibrary {
    QVector<Lesson> lessons;  // sorted by file name
    QStringList errors;       // one per file that could not be read, naming file and key
};

// Where lessons are looked for, in order: $OOMLAB_LESSONS_DIR, share/oomlab/lessons beside
// the executable, the source tree's resources/lessons. The first existing folder wins.
QStringList lessonSearchPath();
QString lessonDirectory();  // empty when none exists

LessonLibrary loadLessons(const QString& directory);
// Throws nothing; on failure returns false and sets `error`.
bool parseLesson(const QByteArray& json, const QString& file, Lesson& lesson, QString& error);

}  // namespace oomlab::ui
