package dev.consistencykit.architecture;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;

/** Every main class of the project the architecture module sees, imported once for all its tests. */
final class ProjectClasses {

    /** The main classes under {@code dev.consistencykit}, tests left out. */
    static final JavaClasses MAIN = new ClassFileImporter()
            .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
            .importPackages("dev.consistencykit");

    private ProjectClasses() {
    }
}
