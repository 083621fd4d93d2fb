#include "experiment/key_editor.h"

#include <QCheckBox>
#include <QComboBox>
#include <QEvent>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QLineEdit>
#include <QRegularExpression>
#include <QSpinBox>
#include <QToolButton>

#include <climits>

#include "common/formatting.h"
#include "common/wheel_passes_on.h"
#include "oomlab/session/experiment.h"

namespace oomlab::ui {
namespace {

bool isPathKey(const std::string& name) {
    return name.size() >= 4 && name.compare(name.size() - 4, 4, "path") == 0;
}

}  // namespace

KeyEditor::KeyEditor(const ConfigKeyInfo& info, QWidget* parent) : QWidget(parent), m_info(info) {
    setObjectName(QStringLiteral("editor:") + qs(info.name));
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(4);
    switch (info.kind) {
        case ValueKind::Integer:
            buildInteger();
            break;
        case ValueKind::Real:
            buildReal();
            break;
        case ValueKind::Boolean:
            buildBoolean();
            break;
        case ValueKind::Choice:
            buildChoice();
            break;
        case ValueKind::Text:
            buildText();
            break;
    }
    const QString tip =
        QStringLiteral("<b>%1</b><br>%2").arg(qs(info.name), qs(info.help).toHtmlEscaped());
    setToolTip(tip);
    for (QWidget* child : findChildren<QWidget*>()) {
        child->setToolTip(tip);
        child->installEventFilter(this);
    }
    installEventFilter(this);
}

QString KeyEditor::key() const {
    return qs(m_info.name);
}

QString KeyEditor::zeroMeaning(const QString& help) {
    static const QRegularExpression pattern(QStringLiteral("0: ([^;]*?)\\.(\\s|$)"));
    const QRegularExpressionMatch match = pattern.match(help);
    return match.hasMatch() ? match.captured(1) : QString();
}

void KeyEditor::buildInteger() {
    m_spin = new WheelPassesOn<QSpinBox>(this);
    m_spin->setKeyboardTracking(false);
    const int maximum =
        m_info.maximum > 0 && m_info.maximum < INT_MAX ? static_cast<int>(m_info.maximum) : INT_MAX;
    m_spin->setRange(static_cast<int>(m_info.minimum), maximum);
    if (m_info.minimum == 0) {
        m_spin->setSpecialValueText(zeroMeaning(qs(m_info.help)));
    }
    if (QString::fromStdString(m_info.name).endsWith(QLatin1String("_mb"))) {
        m_spin->setSuffix(tr(" MiB"));
        m_spin->setSingleStep(16);
    }
    m_spin->setAccelerated(true);
    layout()->addWidget(m_spin);
    connect(m_spin, qOverload<int>(&QSpinBox::valueChanged), this, &KeyEditor::emitEdited);
}

void KeyEditor::buildReal() {
    // No validator: one would silently keep an out-of-range text from being applied. Every
    // text goes to the engine, which accepts it or says why not beside the field.
    m_line = new QLineEdit(this);
    layout()->addWidget(m_line);
    connect(m_line, &QLineEdit::editingFinished, this, &KeyEditor::emitEdited);
}

void KeyEditor::buildBoolean() {
    m_check = new QCheckBox(this);
    layout()->addWidget(m_check);
    connect(m_check, &QCheckBox::toggled, this, &KeyEditor::emitEdited);
}

void KeyEditor::buildChoice() {
    m_combo = new WheelPassesOn<QComboBox>(this);
    for (const std::string& choice : m_info.choices) {
        QString item = qs(choice);
        // A pattern such as "top:N" becomes an editable example value.
        if (item.endsWith(QLatin1String(":N"))) {
            m_combo->setEditable(true);
            item.chop(1);
            item += QStringLiteral("20000");
        }
        m_combo->addItem(item);
    }
    m_combo->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    layout()->addWidget(m_combo);
    if (m_combo->isEditable()) {
        connect(m_combo->lineEdit(), &QLineEdit::editingFinished, this, &KeyEditor::emitEdited);
        connect(m_combo, qOverload<int>(&QComboBox::activated), this, &KeyEditor::emitEdited);
    } else {
        connect(m_combo, qOverload<int>(&QComboBox::currentIndexChanged), this,
                &KeyEditor::emitEdited);
    }
}

void KeyEditor::buildText() {
    if (m_info.name == "device") {
        m_combo = new WheelPassesOn<QComboBox>(this);
        m_combo->setEditable(true);
        m_combo->addItem(QStringLiteral("auto"));
        for (const DeviceInfo& device : available_devices()) {
            m_combo->addItem(qs(device.name));
            m_combo->setItemData(m_combo->count() - 1, qs(device.description), Qt::ToolTipRole);
        }
        layout()->addWidget(m_combo);
        connect(m_combo->lineEdit(), &QLineEdit::editingFinished, this, &KeyEditor::emitEdited);
        connect(m_combo, qOverload<int>(&QComboBox::activated), this, &KeyEditor::emitEdited);
        return;
    }
    m_line = new QLineEdit(this);
    m_line->setClearButtonEnabled(true);
    layout()->addWidget(m_line);
    connect(m_line, &QLineEdit::editingFinished, this, &KeyEditor::emitEdited);
    if (m_info.name == "dataset.path" || m_info.name == "dataset.valid_path") {
        m_line->setPlaceholderText(m_info.name == "dataset.path" ? tr("embedded default")
                                                                 : tr("split from training data"));
        addBrowseButton(tr("File…"), false, false);
        addBrowseButton(tr("Folder…"), true, false);
    } else if (isPathKey(m_info.name)) {
        addBrowseButton(tr("File…"), false, false);
    } else if (m_info.name == "debug.memory_snapshot") {
        m_line->setPlaceholderText(tr("off"));
        addBrowseButton(tr("Save as…"), false, true);
    }
}

void KeyEditor::addBrowseButton(const QString& label, bool folder, bool save) {
    auto* button = new QToolButton(this);
    button->setText(label);
    button->setObjectName(QStringLiteral("browse:") + qs(m_info.name) +
                          (folder ? QStringLiteral(":folder") : QString()));
    layout()->addWidget(button);
    connect(button, &QToolButton::clicked, this, [this, folder, save] {
        const QString start = m_line->text();
        QString path;
        if (folder) {
            path = QFileDialog::getExistingDirectory(this, tr("Choose a folder"), start);
        } else if (save) {
            path = QFileDialog::getSaveFileName(this, tr("Choose a file"), start);
        } else {
            path = QFileDialog::getOpenFileName(this, tr("Choose a file"), start);
        }
        if (!path.isEmpty()) {
            m_line->setText(path);
            emitEdited();
        }
    });
}

QString KeyEditor::text() const {
    if (m_spin) {
        return QString::number(m_spin->value());
    }
    if (m_check) {
        return m_check->isChecked() ? QStringLiteral("true") : QStringLiteral("false");
    }
    if (m_combo) {
        return m_combo->currentText().trimmed();
    }
    return m_line ? m_line->text().trimmed() : QString();
}

void KeyEditor::setText(const QString& value) {
    const QSignalBlocker blockThis(this);
    if (m_spin) {
        const QSignalBlocker block(m_spin);
        m_spin->setValue(value.toInt());
    } else if (m_check) {
        const QSignalBlocker block(m_check);
        m_check->setChecked(value == QLatin1String("true"));
    } else if (m_combo) {
        const QSignalBlocker block(m_combo);
        int index = m_combo->findText(value);
        if (index < 0 && m_combo->isEditable()) {
            // "top:50000" replaces the example "top:20000".
            const int colon = value.indexOf(':');
            index = colon > 0 ? m_combo->findText(value.left(colon + 1), Qt::MatchStartsWith) : -1;
            if (index >= 0) {
                m_combo->setItemText(index, value);
            } else {
                m_combo->addItem(value);
                index = m_combo->count() - 1;
            }
        }
        m_combo->setCurrentIndex(index);
    } else if (m_line) {
        const QSignalBlocker block(m_line);
        m_line->setText(value);
    }
}

void KeyEditor::emitEdited() {
    emit edited(key(), text());
}

bool KeyEditor::eventFilter(QObject* watched, QEvent* event) {
    if (event->type() == QEvent::Enter || event->type() == QEvent::FocusIn) {
        emit hovered(key());
    }
    return QWidget::eventFilter(watched, event);
}

}  // namespace oomlab::ui
