// Parse-only check of Java sources with the JDK's own compiler front end: syntax errors
// fail, unresolved imports (Spring, JPA...) do not, since the corpus ships no build.
import com.sun.source.util.JavacTask;
import java.util.List;
import javax.tools.*;

public class ParseJava {
    public static void main(String[] args) throws Exception {
        JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
        DiagnosticCollector<JavaFileObject> diags = new DiagnosticCollector<>();
        StandardJavaFileManager fm = compiler.getStandardFileManager(diags, null, null);
        Iterable<? extends JavaFileObject> units = fm.getJavaFileObjectsFromStrings(List.of(args));
        JavacTask task = (JavacTask) compiler.getTask(null, fm, diags, List.of("-proc:none"), null, units);
        task.parse();
        int errors = 0;
        for (Diagnostic<? extends JavaFileObject> d : diags.getDiagnostics()) {
            if (d.getKind() == Diagnostic.Kind.ERROR) {
                errors++;
                System.out.println("error " + d.getSource().getName() + ":" + d.getLineNumber() + ": " + d.getMessage(null));
            }
        }
        System.exit(errors == 0 ? 0 : 1);
    }
}
