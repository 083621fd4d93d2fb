#include "lessons/lesson_library.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include "common/formatting.h"
#include "oomlab/config/config_io.h"
#include "oomlab/config/config_keys.h"

#ifndef OOMLAB_SOURCE_LESSONS_DIR
#define OOMLAB_SOURCE_LESSONS_DIR ""
#endif

namespace oomlab::ui {
namespace {

QStringList changedKeys(const ExperimentConfig& config) {
    const ExperimentConfig defaults;
    QStringList changed;
    for (const ConfigKeyInfo& info : config_keys()) {
        const std::string value = get_config_value(config, info.name);
        if (value != get_config_value(defaults, info.name)) {
            changed << QStringLiteral("%1=%2").arg(qs(info.name), qs(value));
        }
    }
    return changed;
}

}  // namespace

QStringList lessonSearchPath() {
    QStringList path;
    const QString fromEnvironment = qEnvironmentVariable("OOMLAB_LESSONS_DIR");
    if (!fromEnvironment.isEmpty()) {
        path << fromEnvironment;
    }
    if (QCoreApplication::instance()) {
        path << QDir(QCoreApplication::applicationDirPath())
                    .absoluteFilePath(QStringLiteral("../share/oomlab/lessons"));
    }
    path << QString::fromUtf8(OOMLAB_SOURCE_LESSONS_DIR);
    return path;
}

QString lessonDirectory() {
    for (const QString& directory : lessonSearchPath()) {
        if (!directory.isEmpty() && QFileInfo(directory).isDir()) {
            return QDir(directory).absolutePath();
        }
    }
    return {};
}

bool parseLesson(const QByteArray& json, const QString& file, Lesson& lesson, QString& error) {
    QJsonParseError parseError;
    const QJsonDocument document = QJsonDocument::fromJson(json, &parseError);
    if (parseError.error != QJsonParseError::NoError || !document.isObject()) {
        error = QObject::tr("%1: not a JSON object (%2 at offset %3)")
                    .arg(file, parseError.errorString())
                    .arg(parseError.offset);
        return false;
    }
    const QJsonObject object = document.object();
    lesson = Lesson();
    lesson.file = file;
    lesson.name = object.value(QStringLiteral("name")).toString(QFileInfo(file).completeBaseName());
    lesson.title = object.value(QStringLiteral("title")).toString(lesson.name);
    lesson.explanation = object.value(QStringLiteral("explanation")).toString();
    const QJsonArray runs = object.value(QStringLiteral("runs")).toArray();
    if (runs.isEmpty()) {
        error = QObject::tr("%1: \"runs\" must list at least one run").arg(file);
        return false;
    }
    for (int i = 0; i < runs.size(); ++i) {
        const QJsonObject run = runs[i].toObject();
        LessonRun lessonRun;
        lessonRun.label = run.value(QStringLiteral("label")).toString(QObject::tr("run %1").arg(i + 1));
        const QByteArray config =
            QJsonDocument(run.value(QStringLiteral("config")).toObject()).toJson(QJsonDocument::Compact);
        try {
            lessonRun.config = parse_config_json(
                config.toStdString(), ss(QStringLiteral("%1 (run \"%2\")").arg(file, lessonRun.label)));
            validate_config(lessonRun.config);
        } catch (const std::exception& failure) {
            error = qs(failure.what());
            return false;
        }
        lessonRun.changedKeys = changedKeys(lessonRun.config);
        lesson.runs.push_back(lessonRun);
    }
    return true;
}

LessonLibrary loadLessons(const QString& directory) {
    LessonLibrary library;
    if (directory.isEmpty()) {
        return library;
    }
    const QFileInfoList files =
        QDir(directory).entryInfoList({QStringLiteral("*.json")}, QDir::Files, QDir::Name);
    for (const QFileInfo& info : files) {
        QFile file(info.absoluteFilePath());
        if (!file.open(QIODevice::ReadOnly)) {
            library.errors << QObject::tr("%1: cannot read").arg(info.absoluteFilePath());
            continue;
        }
        Lesson lesson;
        QString error;
        if (parseLesson(file.readAll(), info.absoluteFilePath(), lesson, error)) {
            library.lessons.push_back(lesson);
        } else {
            library.errors << error;
        }
    }
    return library;
}

}  // namespace oomlab::ui
