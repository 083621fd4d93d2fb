// Every config key of the engine's registry as a control, grouped by the key's section
// (dataset, embeddings, model, ...). Nothing here names a particular key's widget: new keys
// in the registry appear on their own. Edits go through set_config_value, so the form shows
// the engine's own error for a bad value next to the control, and validate_config's message
// for a bad combination above the Run button, before anything runs.
#pragma once

#include <QSet>

#include <QHash>
#include <QWidget>

#include "common/run_types.h"
#include "oomlab/config/experiment_config.h"

class QGroupBox;
class QLabel;
class QVBoxLayout;

namespace oomlab::ui {

class KeyEditor;

class ConfigForm : public QWidget {
    Q_OBJECT

public:
    explicit ConfigForm(QWidget* parent = nullptr);

    const ExperimentConfig& config() const { return m_config; }
    void setConfig(const ExperimentConfig& config);

    // Sets one key as if the user had edited it. False (and the error shown inline) when the
    // engine rejects the value.
    bool setValue(const QString& key, const QString& value);

    // Why the settings cannot run: validate_config's message, else the first error shown beside
    // a key (a value rejected, a file not there or not usable, a refusal); empty when they can.
    QString validationError() const;
    // The inline error of one key's control (empty when its value was accepted).
    QString keyError(const QString& key) const;
    // Whatever is shown beside one key's control: its value, its file or the run refused.
    QString errorOf(const QString& key) const;
    bool isValid() const {
        return m_validationError.isEmpty() && m_keyErrors.isEmpty() && m_inputErrors.isEmpty() &&
               m_readErrors.isEmpty() && m_refusals.isEmpty();
    }

    // What reading the inputs found (a dataset that does not parse, a GloVe file with a bad
    // line): shown beside the keys it is about, and Run stays disabled until fixed.
    void setReadErrors(const QStringList& keys, const QString& message);
    // Why the engine refused to run these settings (a check only a run makes, such as a batch
    // larger than the data allows several processes): shown beside the keys until any setting
    // changes, and Run stays disabled until then.
    void setRunRefusal(const QStringList& keys, const QString& message);

    // How many processes will train: the distributed.* settings apply only to several.
    void setProcesses(int processes);

    KeyEditor* editor(const QString& key) const { return m_editors.value(key); }
    // A lesson's view of the form: `hidden` settings out of sight, `locked` ones shown with the
    // values the lesson's runs train with (the first run's where they differ) and not to be
    // changed (empty: the whole form again, with the user's own values).
    void setLessonView(const QStringList& hidden, const QHash<QString, QStringList>& locked);
    bool isHidden(const QString& key) const { return m_hidden.contains(key); }
    bool isLocked(const QString& key) const { return m_locked.contains(key); }
    // The group box of a section ("dataset", "embeddings", ...), to add related widgets.
    QVBoxLayout* sectionExtras(const QString& section) const { return m_extras.value(section); }

    // A section's title ("memory" -> "Memory").
    static QString sectionTitle(const QString& section);

signals:
    void configChanged(const oomlab::ExperimentConfig& config);
    void validityChanged(bool valid, const QString& message);
    void keyHovered(const QString& key);

private:
    struct Row {
        QLabel* label = nullptr;
        QLabel* error = nullptr;
    };

    QGroupBox* sectionBox(const QString& section);
    void onEdited(const QString& key, const QString& value);
    void refresh();  // values, relevance, validation
    void showKeyError(const QString& key, const QString& message);
    // `message` for each of `keys` the form has a control for.
    QHash<QString, QString> errorsOfKeys(const QStringList& keys, const QString& message) const;

    ExperimentConfig m_config;
    QVBoxLayout* m_layout = nullptr;
    QHash<QString, QGroupBox*> m_sections;
    QHash<QString, QVBoxLayout*> m_extras;
    QHash<QString, KeyEditor*> m_editors;
    QHash<QString, Row> m_rows;
    QHash<QString, QString> m_keyErrors;    // values the engine rejected
    QHash<QString, QString> m_inputErrors;  // files that are not there or not readable
    QHash<QString, QString> m_readErrors;   // files whose content cannot be used
    QHash<QString, QString> m_refusals;     // what the last run refused, until a change
    QSet<QString> m_hidden;                 // by the open lesson
    QHash<QString, QStringList> m_locked;   // key -> the values the lesson's runs train with
    QString m_validationError;
    QSet<QString> m_validationKeys;  // the keys m_validationError is about
    bool m_lastValid = true;
    int m_processes = 1;
};

}  // namespace oomlab::ui
