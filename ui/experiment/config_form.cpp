#include "experiment/config_form.h"

#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QVBoxLayout>

#include "common/formatting.h"
#include "experiment/key_editor.h"
#include "experiment/key_labels.h"
#include "oomlab/common/errors.h"
#include "oomlab/config/config_io.h"
#include "oomlab/config/config_keys.h"
#include "oomlab/config/key_relevance.h"
#include "plots/series_colors.h"

namespace oomlab::ui {
namespace {

QString sectionOf(const QString& key) {
    const int dot = key.indexOf('.');
    return dot < 0 ? key : key.left(dot);
}

QString fieldLabel(const QString& key) {
    QString field = key.mid(key.indexOf('.') + 1);
    field.replace('_', ' ');
    if (!field.isEmpty()) {
        field[0] = field[0].toUpper();
    }
    return field;
}

// The input files the settings name, checked as the engine will check them before a run.
QHash<QString, QString> inputErrors(const ExperimentConfig& config) {
    QHash<QString, QString> errors;
    for (const auto& [key, message] : config_input_problems(config)) {
        errors.insert(qs(key), qs(message));
    }
    return errors;
}

}  // namespace

QString ConfigForm::sectionTitle(const QString& section) {
    static const QHash<QString, QString> titles = {
        {"dataset", tr("Dataset")},   {"embeddings", tr("GloVe embeddings")},
        {"model", tr("Model")},       {"train", tr("Training")},
        {"memory", tr("Memory")},     {"device", tr("Device")},
        {"data", tr("Data loading")}, {"eval", tr("Evaluation")},
        {"debug", tr("Debugging")},   {"distributed", tr("Several processes")}};
    return titles.value(section, fieldLabel(QStringLiteral(".") + section));
}

ConfigForm::ConfigForm(QWidget* parent) : QWidget(parent) {
    m_layout = new QVBoxLayout(this);
    m_layout->setContentsMargins(0, 0, 0, 0);
    // Sections in teaching order; a section the registry adds later goes at the end.
    for (const char* section : {"dataset", "embeddings", "model", "train", "memory", "device",
                                "data", "eval", "debug", "distributed"}) {
        sectionBox(QString::fromLatin1(section));
    }
    for (const ConfigKeyInfo& info : config_keys()) {
        const QString key = qs(info.name);
        QGroupBox* box = sectionBox(sectionOf(key));
        auto* form = static_cast<QFormLayout*>(box->layout()->itemAt(0)->layout());
        auto* editor = new KeyEditor(info, box);
        auto* label = new QLabel(keyLabel(key), box);
        label->setToolTip(editor->toolTip());
        label->setBuddy(editor);
        auto* error = new QLabel(box);
        error->setWordWrap(true);
        error->setObjectName(QStringLiteral("error:") + key);
        QPalette palette = error->palette();
        palette.setColor(QPalette::WindowText, warningColor());
        error->setPalette(palette);
        error->hide();
        auto* field = new QWidget(box);
        auto* fieldLayout = new QVBoxLayout(field);
        fieldLayout->setContentsMargins(0, 0, 0, 0);
        fieldLayout->setSpacing(2);
        fieldLayout->addWidget(editor);
        fieldLayout->addWidget(error);
        form->addRow(label, field);
        m_editors.insert(key, editor);
        m_rows.insert(key, Row{label, error});
        connect(editor, &KeyEditor::edited, this, &ConfigForm::onEdited);
        connect(editor, &KeyEditor::hovered, this, &ConfigForm::keyHovered);
    }
    for (auto it = m_sections.begin(); it != m_sections.end(); ++it) {
        auto* form = static_cast<QFormLayout*>(it.value()->layout()->itemAt(0)->layout());
        it.value()->setVisible(form->rowCount() > 0 || it.key() == QLatin1String("dataset"));
    }
    m_layout->addStretch(1);
    refresh();
}

QGroupBox* ConfigForm::sectionBox(const QString& section) {
    if (QGroupBox* box = m_sections.value(section)) {
        return box;
    }
    auto* box = new QGroupBox(sectionTitle(section), this);
    box->setObjectName(QStringLiteral("section:") + section);
    auto* outer = new QVBoxLayout(box);
    auto* form = new QFormLayout;
    form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
    // A narrow panel (a small screen, presentation mode) puts a field under its label.
    form->setRowWrapPolicy(QFormLayout::WrapLongRows);
    form->setLabelAlignment(Qt::AlignLeft);
    outer->addLayout(form);
    auto* extras = new QVBoxLayout;
    outer->addLayout(extras);
    m_layout->addWidget(box);
    m_sections.insert(section, box);
    m_extras.insert(section, extras);
    return box;
}

QHash<QString, QString> ConfigForm::errorsOfKeys(const QStringList& keys,
                                                 const QString& message) const {
    QHash<QString, QString> errors;
    for (const QString& key : keys) {
        if (m_rows.contains(key)) {
            errors.insert(key, message);
        }
    }
    return errors;
}

void ConfigForm::setReadErrors(const QStringList& keys, const QString& message) {
    const QHash<QString, QString> errors = errorsOfKeys(keys, message);
    if (errors == m_readErrors) {
        return;
    }
    m_readErrors = errors;
    refresh();
}

void ConfigForm::setLessonView(const QStringList& hidden,
                               const QHash<QString, QStringList>& locked) {
    m_hidden = QSet<QString>(hidden.begin(), hidden.end());
    m_locked = locked;
    refresh();
}

void ConfigForm::setProcesses(int processes) {
    m_processes = processes;
    refresh();
}

void ConfigForm::setRunRefusal(const QStringList& keys, const QString& message) {
    m_refusals = errorsOfKeys(keys, message);
    refresh();
}

QString ConfigForm::errorOf(const QString& key) const {
    for (const auto* errors : {&m_keyErrors, &m_inputErrors, &m_readErrors, &m_refusals}) {
        if (errors->contains(key)) {
            return errors->value(key);
        }
    }
    return {};
}

void ConfigForm::setConfig(const ExperimentConfig& config) {
    m_config = config;
    m_keyErrors.clear();
    m_readErrors.clear();
    m_refusals.clear();
    refresh();
    emit configChanged(m_config);
}

bool ConfigForm::setValue(const QString& key, const QString& value) {
    if (KeyEditor* editor = m_editors.value(key)) {
        editor->setText(value);
    }
    onEdited(key, value);
    return !m_keyErrors.contains(key);
}

QString ConfigForm::validationError() const {
    if (!m_validationError.isEmpty()) {
        return m_validationError;
    }
    for (const QHash<QString, QString>* errors :
         {&m_keyErrors, &m_inputErrors, &m_readErrors, &m_refusals}) {
        QStringList keys = errors->keys();
        if (!keys.isEmpty()) {
            keys.sort();
            return errors->value(keys.front());
        }
    }
    return {};
}

QString ConfigForm::keyError(const QString& key) const {
    return m_keyErrors.value(key);
}

void ConfigForm::onEdited(const QString& key, const QString& value) {
    m_refusals.clear();  // the run may take the new settings
    ExperimentConfig next = m_config;
    try {
        set_config_value(next, ss(key), ss(value));
    } catch (const std::exception& error) {
        m_keyErrors.insert(key, qs(error.what()));
        refresh();
        return;
    }
    m_keyErrors.remove(key);
    m_config = next;
    refresh();
    emit configChanged(m_config);
}

void ConfigForm::refresh() {
    m_validationError.clear();
    m_validationKeys.clear();
    m_inputErrors = inputErrors(m_config);
    try {
        validate_config(m_config);
    } catch (const BadInput& error) {
        m_validationError = qs(error.what());
        for (const std::string& key : error.keys()) {
            m_validationKeys.insert(qs(key));
        }
    }
    for (auto it = m_editors.begin(); it != m_editors.end(); ++it) {
        const QString& key = it.key();
        const Row& row = m_rows[key];
        const bool locked = m_locked.contains(key);
        const QStringList lessonValues = m_locked.value(key);
        if (!lessonValues.isEmpty()) {
            it.value()->setText(lessonValues.first());
        } else if (!m_keyErrors.contains(key)) {
            it.value()->setText(qs(get_config_value(m_config, ss(key))));
        }
        QString inactive = qs(key_inactive_reason(m_config, ss(key), m_processes));
        if (inactive.isEmpty() && locked) {
            inactive = lessonValues.size() > 1
                           ? tr("Fixed by the lesson that is open; its runs train with %1")
                                 .arg(lessonValues.join(QStringLiteral(", ")))
                           : tr("Fixed by the lesson that is open");
        }
        it.value()->setEnabled(inactive.isEmpty());
        row.label->setEnabled(inactive.isEmpty());
        row.label->setStatusTip(inactive);
        const bool shown = !m_hidden.contains(key);
        it.value()->setVisible(shown);
        row.label->setVisible(shown);
        const QString error = errorOf(key);
        showKeyError(key, shown ? error : QString());
        // The keys a combination error is about are marked too.
        const bool marked = m_validationKeys.contains(key) || !error.isEmpty();
        QFont font = row.label->font();
        font.setBold(marked);
        row.label->setFont(font);
        QPalette palette = this->palette();
        if (marked) {
            palette.setColor(QPalette::WindowText, warningColor());
        }
        row.label->setPalette(palette);
    }
    const bool valid = isValid();
    QString message = m_validationError;
    for (const auto* errors : {&m_keyErrors, &m_inputErrors, &m_readErrors, &m_refusals}) {
        if (message.isEmpty() && !errors->isEmpty()) {
            message = errors->begin().value();
        }
    }
    if (valid != m_lastValid || !valid) {
        m_lastValid = valid;
        emit validityChanged(valid, message);
    }
}

void ConfigForm::showKeyError(const QString& key, const QString& message) {
    QLabel* error = m_rows[key].error;
    error->setText(message);
    error->setVisible(!message.isEmpty());
}

}  // namespace oomlab::ui
