// The control for one config key, chosen by the key's kind in the registry: a spin box,
// a line edit, a check box, a combo box, or a path with Browse buttons. Its tooltip is the
// registry's help text.
#pragma once

#include <QWidget>

#include "oomlab/config/config_keys.h"

class QCheckBox;
class QComboBox;
class QLineEdit;
class QSpinBox;

namespace oomlab::ui {

class KeyEditor : public QWidget {
    Q_OBJECT

public:
    explicit KeyEditor(const ConfigKeyInfo& info, QWidget* parent = nullptr);

    QString key() const;
    const ConfigKeyInfo& info() const { return m_info; }
    QString text() const;                // the value as config text ("32", "adam", "true")
    void setText(const QString& value);  // shows a value without emitting edited()

    // "0: no cap." in the help becomes the spin box's text for 0.
    static QString zeroMeaning(const QString& help);

signals:
    void edited(const QString& key, const QString& value);
    void hovered(const QString& key);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void buildInteger();
    void buildReal();
    void buildBoolean();
    void buildChoice();
    void buildText();
    void addBrowseButton(const QString& label, bool folder, bool save);
    void emitEdited();

    ConfigKeyInfo m_info;
    QSpinBox* m_spin = nullptr;
    QLineEdit* m_line = nullptr;
    QCheckBox* m_check = nullptr;
    QComboBox* m_combo = nullptr;
};

}  // namespace oomlab::ui
