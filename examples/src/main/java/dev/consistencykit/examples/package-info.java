/** What a user copies: one runnable example per pattern, as the tour runs them (the docs' samples are its tests). */
package dev.consistencykit.examples;
