#include "common/tab_sizing.h"

#include <QTabWidget>

namespace oomlab::ui {
namespace {

void sizeTo(QTabWidget* tabs, int current) {
    for (int i = 0; i < tabs->count(); ++i) {
        // An ignored policy leaves the page's minimum size out of its stack's (qSmartMinSize).
        const auto policy = i == current ? QSizePolicy::Preferred : QSizePolicy::Ignored;
        tabs->widget(i)->setSizePolicy(policy, policy);
    }
}

}  // namespace

void sizeTabsToCurrentPage(QTabWidget* tabs) {
    QObject::connect(tabs, &QTabWidget::currentChanged, tabs,
                     [tabs](int index) { sizeTo(tabs, index); });
    sizeTo(tabs, tabs->currentIndex());
}

}  // namespace oomlab::ui
